// simkit disco: a distributional thesaurus (DISCO) from a corpus, and its queries.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "simkit/disco.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"
#include "simkit/wordsim.hpp"

namespace simkit::cli {

namespace {

struct BuildOptions {
  CommonOptions common;
  std::vector<std::string> corpus;
  std::string output;
  std::string input_format = "auto";
  std::string measure = "lin";
  disco::BuildOptions build;
  // The options whose defaults differ for ppmi (ppmi_defaults), set when given.
  CLI::Option* window = nullptr;
  CLI::Option* shift = nullptr;
  CLI::Option* min_count = nullptr;
  CLI::Option* weights = nullptr;
};

// --measure ppmi's defaults where the command line is silent, chosen on the public gold
// standards (docs/disco.md): five context words each side (window 6), distance weights,
// shift 2 (ln 2 off every PMI), words seen at least twice.
void ppmi_defaults(const BuildOptions& options, disco::BuildOptions& build) {
  if (options.window->count() == 0) build.window = 6;
  if (options.shift->count() == 0) build.ppmi.shift = 2;
  if (options.min_count->count() == 0) build.min_count = 2;
  if (options.weights->count() == 0) build.ppmi.weighted = true;
}

struct QueryOptions {
  CommonOptions common;
  std::string model;
  std::vector<std::string> words;
  std::size_t k = 10;
  std::string format = "tsv";
  std::string output = "-";
  bool all = false;       // similar: every word
  bool full = false;      // similar --all: the N x N matrix
  std::string form = "dense";
  std::size_t features = 0;
  std::string precision = "fp32";
  std::string kernel = "auto";
};

int run_build(const BuildOptions& options) {
  const Context context = make_context(options.common);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t bytes = 0;
  const std::vector<std::string> files = text_files(options.corpus, bytes);
  disco::BuildOptions build = options.build;
  build.measure = disco::parse_measure(options.measure);
  if (build.measure == disco::Measure::ppmi) ppmi_defaults(options, build);
  build.format = parse_text_format(options.input_format);
  build.memory_budget = context.memory_budget;
  disco::Model model;
  {
    Progress progress("counting", 2 * bytes, "B");  // two passes
    model = disco::build(files, build, &progress);
  }
  if (cluster::root() && model.size() == 0)  // (the other ranks' counts went to root)
    throw InputError(Location{files.size() == 1 ? files[0] : options.corpus[0]},
                     "the corpus has no word that could be paired (empty, or only stop words)");
  if (cluster::root()) disco::write_model(model, options.output);
  if (context.timings)
    note(fmt::format("timing: counted {:.1f} MB in {:.3f} s ({:.1f} MB/s): {} words, {} features of {} > 0",
                     bytes / 1e6, seconds_since(start), bytes / 1e6 / seconds_since(start), model.size(),
                     model.features.size(), build.measure == disco::Measure::ppmi ? "PPMI" : "MI"));
  return kExitOk;
}

int run_compare(const QueryOptions& options) {
  if (options.words.size() != 2) throw UsageError("disco compare takes two words");
  make_context(options.common);
  const disco::Model model = disco::read_model(options.model);
  const std::size_t a = disco::lookup(model, options.words[0]), b = disco::lookup(model, options.words[1]);
  OutputFile out(options.output, cluster::root());
  out.write(fmt::format("{}\t{}\t{:.6f}\n", options.words[0], options.words[1], disco::similarity(model, a, b)));
  out.commit();
  return kExitOk;
}

disco::Precision precision_of(const std::string& name) {
  if (name == "fp32") return disco::Precision::fp32;
  if (name == "tf32") return disco::Precision::tf32;
  if (name == "fp16") return disco::Precision::fp16;
  throw UsageError(fmt::format("--precision {}: expected fp32, tf32 or fp16", quote(name)));
}

disco::ProductKernel kernel_of(const std::string& name) {
  if (name == "auto") return disco::ProductKernel::automatic;
  if (name == "cublas") return disco::ProductKernel::cublas;
  if (name == "simkit") return disco::ProductKernel::simkit;
  throw UsageError(fmt::format("--kernel {}: expected auto, cublas or simkit", quote(name)));
}

// --device auto's rule (docs/gpu.md; bench/auto_device.sh on an H200 with 16 cores): the
// work grows with N^2 x F (words, and features a row); below kDiscoGpuWork the CPU ends
// first, the GPU's start (0.3-0.5 s) counted. A model file of kDiscoBytesToStartGpu or
// more (some 7,000 words) starts the GPU while it is read.
constexpr double kDiscoGpuWork = 1e10;
constexpr std::uintmax_t kDiscoBytesToStartGpu = 8u << 20;

// The job's options but its device.
disco::AllPairsOptions all_pairs_options(const QueryOptions& options, std::size_t words, std::size_t memory_budget) {
  disco::AllPairsOptions all;
  all.k = options.full ? std::max<std::size_t>(words, 2) - 1 : std::min(options.k, std::max<std::size_t>(words, 2) - 1);
  all.form = options.form == "dense" ? disco::Form::dense : disco::Form::sparse;
  all.features = options.features;
  all.precision = precision_of(options.precision);
  all.kernel = kernel_of(options.kernel);
  all.memory_budget = memory_budget;
  return all;
}

// Every word's k most similar words (or the whole matrix) through the pairwise engine;
// `device` started early (while the model was read) or not.
int run_similar_all(const QueryOptions& options, Context& context, const disco::Model& model, DeviceStart& device) {
  const double columns = options.features > 0              ? static_cast<double>(options.features)
                         : !model.dense_features.empty() ? static_cast<double>(model.dense_features.size())
                                                         : static_cast<double>(model.features.size()) /
                                                               static_cast<double>(std::max<std::size_t>(model.size(), 1));
  const double words = static_cast<double>(model.size());
  const bool gpu_pays_off = words * words * columns >= kDiscoGpuWork;
  // The dense rows need only the model: made on all cores while the GPU finishes starting.
  const auto prepare_start = std::chrono::steady_clock::now();
  // --device auto keeps a job too small to gain from the GPU on the CPU, started or not.
  const bool kept_on_cpu = parse_device(options.common.device).kind == DeviceSpec::Kind::Auto && !gpu_pays_off;
  const bool gpu_likely = device.started() && !kept_on_cpu;
  std::shared_ptr<const disco::PreparedRows> prepared =
      disco::prepare_rows(model, all_pairs_options(options, model.size(), context.memory_budget), gpu_likely);
  if (context.timings && prepared)
    note(fmt::format("timing: dense rows made in {:.3f} s{}", seconds_since(prepare_start),
                     gpu_likely ? " while the GPU started" : ""));
  // Their entries, which every GPU uploads, page-locked meanwhile through the first GPU's
  // context (else the job locks them first, on its own time).
  const auto lock_start = std::chrono::steady_clock::now();
  if (prepared && gpu_likely && device.with_chosen_gpu([&](int gpu) { disco::page_lock_rows(*prepared, gpu); }) &&
      context.timings)
    note(fmt::format("timing: their entries page-locked {:.3f} s later", seconds_since(lock_start)));
  const auto wait_start = std::chrono::steady_clock::now();
  if (kept_on_cpu)
    context.device = device_for_job(options.common, false);  // the CPU
  else if (device.started())
    context.device = device.device.get();
  else
    context.device = device_for_job(options.common, gpu_pays_off);
  if (context.timings && context.device.cuda)
    note(fmt::format("timing: waited {:.3f} s for {} after the model was read", seconds_since(wait_start),
                     context.device.name));
  disco::AllPairsOptions all = all_pairs_options(options, model.size(), context.memory_budget);
  if (context.device.cuda) {
    all.device = context.device.index;
    all.devices = context.device.indices;
  }
  const auto start = std::chrono::steady_clock::now();
  TopKLists lists;
  double device_ms = -1;
  {
    Progress progress("pairs", model.size() * (model.size() - (model.size() > 0)) / 2, "pairs");
    lists = disco::all_pairs(model, all, &progress, &device_ms, prepared.get());
  }
  const std::size_t dense_width = prepared ? disco::columns_of(*prepared) : 0;
  // The rows and their entries (hundreds of MB unlocked and freed) are not needed for
  // writing: freed beside it (or here, if no thread can be started).
  const std::optional<std::jthread> freeing = free_beside(std::move(prepared));
  if (context.timings)
    note(fmt::format("timing: all pairs of {} words ({} form{}) on {} in {:.3f} s{}", model.size(), options.form,
                     all.form == disco::Form::dense ? fmt::format(", {} columns", dense_width) : "",
                     all.device >= 0 ? context.device.name : "cpu", seconds_since(start),
                     device_ms >= 0 ? fmt::format(" ({:.1f} ms on the device)", device_ms) : ""));
  const auto writing = std::chrono::steady_clock::now();
  OutputFile out(options.output, cluster::root());
  fmt::memory_buffer text;
  const auto flush = [&](bool last) {
    if (text.size() > (1u << 20) || last) out.write({text.data(), text.size()}), text.clear();
  };
  if (options.full) {
    // A header of words, then a row a word: its score with every word (1 with itself
    // when it has features).
    std::vector<float> row(model.size());
    for (std::size_t w = 0; w < model.size(); ++w) fmt::format_to(std::back_inserter(text), "\t{}", model.words[w]);
    text.push_back('\n');
    for (std::size_t w = 0; w < model.size(); ++w) {
      std::fill(row.begin(), row.end(), 0.0f);
      row[w] = model.mi_sums[w] > 0 ? 1.0f : 0.0f;
      for (std::size_t r = 0; r < lists.k; ++r)
        if (lists.row_indices(w)[r] != kNoIndex) row[lists.row_indices(w)[r]] = lists.row_scores(w)[r];
      fmt::format_to(std::back_inserter(text), "{}", model.words[w]);
      for (const float v : row) fmt::format_to(std::back_inserter(text), "\t{:.6f}", v);
      text.push_back('\n');
      flush(false);
    }
  } else {
    write_in_slices(out, model.size(), 4096, [&](std::size_t begin, std::size_t end, std::string& slice) {
      for (std::size_t w = begin; w < end; ++w)
        for (std::size_t r = 0; r < lists.k && lists.row_indices(w)[r] != kNoIndex; ++r)
          fmt::format_to(std::back_inserter(slice), "{}\t{}\t{}\t{:.6f}\n", model.words[w], r + 1,
                         model.words[lists.row_indices(w)[r]], lists.row_scores(w)[r]);
    });
  }
  flush(true);
  out.commit();
  if (context.timings) note(fmt::format("timing: lists written in {:.3f} s", seconds_since(writing)));
  return kExitOk;
}

int run_similar(const QueryOptions& options) {
  if (options.format != "tsv") throw UsageError(fmt::format("--format {}: expected tsv", quote(options.format)));
  if (options.k == 0) throw UsageError("--k must be at least 1");
  // The device is resolved by --all (from the job's size); word queries run on the CPU.
  Context context = make_context(options.common, false);
  parse_device(options.common.device);
  cluster::check_same_file(options.model);  // every rank reads the model itself
  const bool all = options.all || options.full;
  if (all) {
    if (!options.words.empty()) throw UsageError("--all takes no words");
    if (options.form != "dense" && options.form != "sparse")
      throw UsageError(fmt::format("--form {}: expected dense or sparse", quote(options.form)));
  }
  // A GPU named outright, or under --device auto a large model, starts while it is read.
  DeviceStart device;
  std::error_code size_error;
  const std::uintmax_t bytes = std::filesystem::file_size(options.model, size_error);
  const DeviceSpec::Kind kind = parse_device(options.common.device).kind;
  if (all && (kind == DeviceSpec::Kind::Cuda ||
              (kind == DeviceSpec::Kind::Auto && !size_error && bytes >= kDiscoBytesToStartGpu))) {
    const disco::AllPairsOptions ready = all_pairs_options(options, 1u << 20, context.memory_budget);
    device.begin(options.common, true, [ready](int index) { disco::prepare_gpu(ready, index); });
  }
  const auto read_start = std::chrono::steady_clock::now();
  const disco::Model model = disco::read_model(options.model);
  if (context.timings && all)
    note(fmt::format("timing: read {} words in {:.3f} s", model.size(), seconds_since(read_start)));
  if (all) {
    if (options.full && model.size() > 20000)
      throw UsageError(fmt::format("--full prints an N x N matrix; {} words is too many (at most 20,000)", model.size()));
    return run_similar_all(options, context, model, device);
  }
  if (options.words.empty()) throw UsageError("give words, or --all");
  // Word queries run on the CPU; a GPU named outright must still exist.
  if (kind == DeviceSpec::Kind::Cuda) device_for_job(options.common, false);
  std::string text;
  for (const std::string& word : options.words) {
    const std::size_t row = disco::lookup(model, word);
    std::size_t rank = 0;
    for (const disco::Neighbour& n : disco::most_similar(model, row, options.k))
      text += fmt::format("{}\t{}\t{}\t{:.6f}\n", word, ++rank, model.words[n.word], n.score);
  }
  OutputFile out(options.output, cluster::root());
  out.write(text);
  out.commit();
  return kExitOk;
}

int run_evaluate(const QueryOptions& options) {
  make_context(options.common);
  const disco::Model model = disco::read_model(options.model);
  OutputFile out(options.output, cluster::root());
  for (const std::string& gold : options.words)
    out.write(wordsim::evaluation_line(gold, disco::evaluate(model, wordsim::read_gold(gold))));
  out.commit();
  return kExitOk;
}

}  // namespace

Runner add_disco_command(CLI::App& app) {
  auto build = std::make_shared<BuildOptions>();
  auto compare = std::make_shared<QueryOptions>();
  auto similar = std::make_shared<QueryOptions>();
  auto evaluate = std::make_shared<QueryOptions>();
  CLI::App* command = app.add_subcommand(
      "disco", "Distributional word similarity (DISCO): words alike because they keep the same company.");
  command->require_subcommand(1);
  command->footer(
      "Examples:\n"
      "  simkit disco build corpus.txt -o corpus.skd --words 20000\n"
      "  simkit disco similar --model corpus.skd king queen --k 10\n"
      "  simkit disco compare --model corpus.skd cat dog\n"
      "  simkit disco similar --model corpus.skd --all --k 10 -o neighbours.tsv\n"
      "  simkit disco evaluate --model corpus.skd EN-WS-353-ALL.txt");

  CLI::App* b = command->add_subcommand(
      "build",
      "Counts window co-occurrences <w1, r, w2> in a corpus (UTF-8 text files or directories; a sentence\n"
      "never crosses a line end), computes their mutual information (natural log; only MI > 0 kept as\n"
      "features; --measure ppmi: the positive PMI of word-context pairs) and writes the model (.skd).");
  b->add_option("corpus", build->corpus,
                "text files or directories (.gz, .bz2 and .zst read as streams; Wikipedia pages-articles dumps)")
      ->required();
  b->add_option("-o,--output", build->output, "the model file to write")->required();
  b->add_option("--measure", build->measure,
                "lin (features (relation, word) of MI > 0, Lin's measure) or ppmi (context words at any distance "
                "up to the window, positive PMI with context smoothing, cosine); similar, compare, evaluate use it")
      ->capture_default_str();
  build->window = b->add_option("--window", build->build.window,
                                "each word pairs with the window - 1 words on each side (default: 4; 6 for ppmi)");
  b->add_option("--stopwords", build->build.stopwords,
                "FILE (a word a line), english (the bundled list) or none; default: english for lin, none for "
                "ppmi. Stop words keep their positions but are never paired");
  b->add_option("--alpha", build->build.ppmi.alpha, "ppmi: context-distribution smoothing, #(c)^alpha (1 = none)")
      ->capture_default_str();
  build->shift = b->add_option("--shift", build->build.ppmi.shift,
                               "ppmi: k, ln k subtracted from every PMI (default 2; 1 = no shift)");
  build->weights = b->add_flag("--distance-weights,!--no-distance-weights", build->build.ppmi.weighted,
                               "ppmi: a context at distance d counts (L - d + 1) / L, L = window - 1 (word2vec's "
                               "dynamic window); on by default");
  b->add_option("--subsample", build->build.subsample,
                "drop a token of a word of frequency f > T with probability 1 - sqrt(T / f) before the windows "
                "(0 = never; e.g. 1e-4)")
      ->capture_default_str();
  b->add_option("--seed", build->build.seed, "seed of --subsample's choices")->capture_default_str();
  build->min_count =
      b->add_option("--min-count", build->build.min_count, "drop words seen fewer times (default: 1; 2 for ppmi)");
  b->add_option("--words", build->build.words, "vectors for the N most frequent words only (0 = all)")
      ->capture_default_str();
  b->add_flag("--keep-case", build->build.keep_case, "do not lower-case words");
  b->add_option("--features", build->build.features,
                "also keep the dense form over the F features most words have (N x F floats in the model)")
      ->capture_default_str();
  b->add_option("--input-format", build->input_format,
                "auto (a Wikipedia XML dump when a file starts with <mediawiki, else text), text or wikipedia")
      ->capture_default_str();
  add_common_options(*b, build->common);

  const auto add_query = [&](const char* name, const char* what, QueryOptions& o, const char* words) {
    CLI::App* sub = command->add_subcommand(name, what);
    sub->add_option("-m,--model", o.model, "the model (.skd, from 'simkit disco build')")->required();
    auto* positional = sub->add_option(words[0] == 'g' ? "gold" : "words", o.words, words);
    if (std::string(name) != "similar") positional->required();
    sub->add_option("-o,--output", o.output, "output file (default: standard output)");
    add_common_options(*sub, o.common);
    return sub;
  };
  add_query("compare", "Prints 'W1<TAB>W2<TAB>score', the model's similarity of two words (Lin's, or the cosine of "
                       "their PPMI rows; 0..1, 6 decimals).", *compare,
            "the two words");
  CLI::App* s = add_query("similar", "Prints 'word<TAB>rank<TAB>neighbour<TAB>score' for each word's k most similar "
                                     "words (ties by the more frequent word); --all: for every word.",
                          *similar, "the words");
  s->add_option("-k,--k", similar->k, "neighbours per word")->capture_default_str();
  s->add_option("--format", similar->format, "tsv")->capture_default_str();
  s->add_flag("--all", similar->all, "every word's k most similar words (all pairs, on the GPU when there is one)");
  s->add_flag("--full", similar->full, "with --all: the whole N x N matrix (N <= 20,000), a header of words first");
  s->add_option("--form", similar->form, "--all: dense (one matrix product; --features columns) or sparse (every feature: merges on the CPU, inverted lists on the GPU)")
      ->capture_default_str();
  s->add_option("--features", similar->features, "--all, dense: the F features most words have (0 = every feature)")
      ->capture_default_str();
  s->add_option("--precision", similar->precision, "--all, dense, on a GPU: fp32 (fp32 accuracy, split TF32 products), tf32 (tensor cores, faster) or fp16 "
                "(rows stored as halves: TF32's 10 fraction bits, rounded; twice TF32's rate)")
      ->capture_default_str();
  s->add_option("--kernel", similar->kernel,
                "--all, dense, tf32 or fp16, on a GPU: cublas (the pairwise engine: products, scores, selection), "
                "simkit (the fused self-join: each pair multiplied once, the division and top k in the kernel; "
                "Hopper, k <= 16) or auto (both timed on the first 8,192 words; the self-join kept when 10% faster)")
      ->capture_default_str();
  add_query("evaluate",
            "Spearman's rho of the model's similarities against word-similarity gold standards\n"
            "('word1<TAB>word2<TAB>score' lines), over the pairs the vocabulary covers (reported).",
            *evaluate, "gold-standard files");

  return [b, build, compare, similar, evaluate, command]() {
    if (b->parsed()) return run_build(*build);
    if (command->get_subcommand("compare")->parsed()) return run_compare(*compare);
    if (command->get_subcommand("similar")->parsed()) return run_similar(*similar);
    return run_evaluate(*evaluate);
  };
}

}  // namespace simkit::cli
