// simkit embed: word vectors from a corpus (PPMI, then a randomized truncated SVD), in any
// format `simkit neighbors` reads.
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "simkit/cluster.hpp"
#include "simkit/device.hpp"
#include "simkit/disco.hpp"
#include "simkit/embed.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/neighbors.hpp"
#include "simkit/progress.hpp"

namespace simkit::cli {

namespace {

struct EmbedOptions {
  CommonOptions common;
  std::vector<std::string> corpus;
  std::string output;
  std::string to;
  std::string words;  // .npy output: the word list's file
  std::string input_format = "auto";
  int window = 5;     // context words on each side (disco's window - 1)
  embed::Options embed = embed::default_options();
};

neighbors::Format output_format(const EmbedOptions& options) {
  if (!options.to.empty()) {
    const neighbors::Format format = neighbors::parse_format(options.to);
    if (format == neighbors::Format::Auto)
      throw UsageError(fmt::format("--to {}: expected skv, glove, word2vec, word2vec-binary or npy", options.to));
    return format;
  }
  const neighbors::Format format = neighbors::format_of_extension(options.output);
  if (format == neighbors::Format::Auto)
    throw UsageError(fmt::format("cannot tell the output format from {}: name it .skv, .txt (GloVe), .vec "
                                 "(word2vec), .bin (word2vec binary) or .npy, or add --to",
                                 quote(options.output)));
  return format;
}

// The .npy output's word list: --words, else the output's name with .words for .npy.
std::string words_path(const EmbedOptions& options) {
  if (!options.words.empty()) return options.words;
  std::filesystem::path path(options.output);
  return path.replace_extension(".words").string();
}

// Corpora up to this size have their words counted (the first pass) while the GPU's driver
// starts (cuInit and the context take 0.1-0.5 s, a third of a small corpus's run); a
// device that cannot be had is then reported after that pass. Larger corpora resolve the
// device first.
constexpr std::uint64_t kCountWhileDeviceStarts = std::uint64_t{1} << 30;
// Smaller corpora are embedded sooner on the CPU than the GPU's driver starts and loads
// the SVD's kernels: --device auto takes the CPU for them (docs/gpu.md).
constexpr std::uint64_t kEmbedGpuBytes = std::uint64_t{5} << 20;

int run_embed(EmbedOptions& options) {
  Context context = make_context(options.common, false);
  parse_device(options.common.device);  // a bad --device refused before the corpus is read
  const neighbors::Format to = output_format(options);
  if (options.output == "-" && to != neighbors::Format::Glove && to != neighbors::Format::Word2VecText)
    throw UsageError("binary vectors cannot go to standard output: give -o FILE");
  if (options.window < 1 || options.window > 63) throw UsageError("--window must be 1..63");
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t bytes = 0;
  const std::vector<std::string> files = text_files(options.corpus, bytes);
  embed::Options embed = options.embed;
  embed.counting.window = options.window + 1;
  embed.counting.format = parse_text_format(options.input_format);
  embed.counting.memory_budget = context.memory_budget;
  // The device found (what the pair counting waits for), then readied for the SVD while
  // the pairs are counted.
  std::promise<Device> found;
  std::shared_future<Device> device_started = found.get_future().share();
  std::jthread starting([&found, &common = options.common, bytes, svd = embed.svd] {
    Device device;
    try {
      device = device_for_job(common, bytes >= kEmbedGpuBytes);
      found.set_value(device);
    } catch (...) {
      found.set_exception(std::current_exception());
      return;
    }
    if (device.cuda && cluster::root()) {
      embed::SvdOptions on_device = svd;
      on_device.device = device.index;
      embed::prepare_device(on_device);
    }
  });
  if (bytes > kCountWhileDeviceStarts) context.device = device_started.get();
  // The pairs are counted on the device (when a GPU): it is waited for after the first pass.
  embed.counting.device_after_first_pass = [device_started] {
    const Device device = device_started.get();
    return device.cuda ? device.index : -1;
  };
  embed::Timings timings;
  disco::Model counts;
  {
    Progress progress("counting", 2 * bytes, "B");  // two passes
    counts = embed::count(files, embed, &progress, &timings.counting);
    timings.count_s = seconds_since(start);
  }
  context.device = device_started.get();
  if (!cluster::root()) return kExitOk;  // under mpirun: the counts went to root, which does the rest
  if (context.device.cuda) embed.svd.device = context.device.index;
  const embed::Vectors vectors = embed::vectors_of_counts(counts, files.empty() ? "" : files[0], embed, &timings);
  counts = {};
  const auto write_start = std::chrono::steady_clock::now();
  neighbors::save_model(embed::as_model(vectors), options.output, to, nullptr,
                        to == neighbors::Format::Npy ? words_path(options) : "");
  if (context.timings) {
    const disco::BuildTimings& c = timings.counting;
    note(fmt::format("timing: counted {:.1f} MB in {:.3f} s (words {:.3f} s, pairs {:.3f} s on {}{}, PPMI {:.3f} s): {} "
                     "words, {} PPMI values > 0",
                     bytes / 1e6, timings.count_s, c.words_s, c.pairs_s, c.on_device ? context.device.name : "cpu",
                     c.on_device ? fmt::format(" (waiting for it {:.3f} s, kernels {:.1f} ms)", c.device_wait_s,
                                               c.pairs_device_ms)
                                 : "",
                     c.scores_s, timings.words, timings.nonzeros));
    note(fmt::format("timing: SVD (rank {}, {} power iterations) on {} in {:.3f} s{}", vectors.dim,
                     embed.svd.power_iterations, context.device.cuda ? context.device.name : "cpu", timings.svd_s,
                     timings.svd_device_ms >= 0 ? fmt::format(" ({:.1f} ms on the device)", timings.svd_device_ms)
                                                : ""));
    note(fmt::format("timing: wrote {} in {:.3f} s; {:.3f} s in all", options.output, seconds_since(write_start),
                     seconds_since(start)));
  }
  return kExitOk;
}

}  // namespace

Runner add_embed_command(CLI::App& app) {
  auto options = std::make_shared<EmbedOptions>();
  embed::Options& e = options->embed;
  CLI::App* command = app.add_subcommand(
      "embed",
      "Word vectors from a corpus: the PPMI matrix of word-context counts (as 'disco build --measure ppmi'),\n"
      "then its truncated SVD (randomized; the CPU, or a GPU), vectors U S^p (+ the context vectors V S^p).\n"
      "Writes any format 'simkit neighbors' reads, chosen by the output's extension or --to.");
  command->footer(
      "Examples:\n"
      "  simkit embed corpus.txt -o vectors.skv\n"
      "  simkit neighbors --model vectors.skv king\n"
      "  simkit neighbors evaluate --model vectors.skv EN-WS-353-ALL.txt EN-SIMLEX-999.txt\n"
      "  simkit embed corpus/ -o vectors.vec --dim 100 --device cuda\n"
      "Defaults were chosen on the WS-353, SimLex-999, RG-65 and MC-30 gold standards (docs/embed.md).");
  command->add_option("corpus", options->corpus,
                      "text files or directories (.gz, .bz2 and .zst read as streams; Wikipedia pages-articles dumps)")
      ->required();
  command->add_option("-o,--output", options->output,
                      "the vectors: .skv, .txt (GloVe), .vec (word2vec text), .bin (word2vec binary) or .npy")
      ->required();
  command->add_option("--to", options->to, "output format (default: from the extension): skv, glove, word2vec, "
                                           "word2vec-binary or npy");
  command->add_option("--words", options->words, "with .npy: the word list's file (default: the output's name, .words)");
  command->add_option("--dim", e.svd.rank, "dimensions (the SVD's rank)")->capture_default_str();
  command->add_option("--window", options->window, "context words on each side of a word")->capture_default_str();
  command->add_flag("--distance-weights,!--no-distance-weights", e.counting.ppmi.weighted,
                    "a context at distance d counts (L - d + 1) / L (word2vec's dynamic window)")
      ->capture_default_str();
  command->add_option("--alpha", e.counting.ppmi.alpha, "context-distribution smoothing, #(c)^alpha (1 = none)")
      ->capture_default_str();
  command->add_option("--shift", e.counting.ppmi.shift, "k: ln k subtracted from every PMI (1 = no shift)")
      ->capture_default_str();
  command->add_option("--subsample", e.counting.subsample,
                      "drop a token of frequency f > T with probability 1 - sqrt(T / f) before the windows (0 = never)")
      ->capture_default_str();
  command->add_option("--min-count", e.counting.min_count, "words seen fewer times get no vector and are no context")
      ->capture_default_str();
  command->add_option("--max-words", e.counting.words, "vectors for the N most frequent words only (0 = all)")
      ->capture_default_str();
  command->add_option("--stopwords", e.counting.stopwords,
                      "FILE (a word a line), english (the bundled list) or none: stop words keep their places but "
                      "get no vector and are no context")
      ->capture_default_str();
  command->add_flag("--keep-case", e.counting.keep_case, "do not lower-case words");
  command->add_option("--eig", e.eig, "p: vectors U S^p (0 or 0.5 measured best)")->capture_default_str();
  command->add_flag("--contexts,!--no-contexts", e.add_contexts, "add the context vectors V S^p (Levy et al.'s w+c)")
      ->capture_default_str();
  command->add_option("--oversampling", e.svd.oversampling, "extra sketch columns of the randomized SVD")
      ->capture_default_str();
  command->add_option("--power-iterations", e.svd.power_iterations, "power iterations of the randomized SVD")
      ->capture_default_str();
  command->add_option("--seed", e.svd.seed, "seed of the SVD's test matrix (and of --subsample)")
      ->capture_default_str();
  command->add_option("--input-format", options->input_format,
                      "auto (a Wikipedia XML dump when a file starts with <mediawiki, else text), text or wikipedia")
      ->capture_default_str();
  add_common_options(*command, options->common);
  return [options]() {
    options->embed.counting.seed = options->embed.svd.seed;
    return run_embed(*options);
  };
}

}  // namespace simkit::cli
