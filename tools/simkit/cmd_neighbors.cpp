// simkit neighbors: the k most cosine-similar words of a word or an expression such as
// `king - man + woman`, and `simkit neighbors convert` between model formats.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "line_reader.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/neighbors.hpp"
#include "simkit/progress.hpp"
#include "simkit/wordsim.hpp"

namespace simkit::cli {

namespace {

using neighbors::Format;
using neighbors::Match;
using neighbors::Model;
using neighbors::Query;

enum class OutFormat { Text, Tsv, Json };

struct NeighborsOptions {
  CommonOptions common;
  std::string model;
  std::string words;
  std::string input_format = "auto";
  std::string precision = "fp32";
  std::string gpu_split = "auto";
  std::string format = "text";
  std::string output = "-";
  std::size_t k = 10;
  std::size_t batch = 4096;
  bool compare_cpu = false;
  std::vector<std::string> queries;
};

struct EvaluateOptions {
  CommonOptions common;
  std::string model;
  std::string words;
  std::string input_format = "auto";
  std::string output = "-";
  std::vector<std::string> gold;
};

struct ConvertOptions {
  CommonOptions common;
  std::string input;
  std::string output;
  std::string to;
  std::string words;
  std::string input_format = "auto";
};

// `check_in_background`: an .skv file's checksum is verified on a thread while the
// command goes on; it calls model.wait_checked() before it writes an answer.
Model load(const std::string& path, const std::string& input_format, const std::string& words,
           bool timings, bool check_in_background = false) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  Progress progress("loading " + std::filesystem::path(path).filename().string(), ec ? 0 : size, "B");
  neighbors::LoadOptions options;
  options.format = neighbors::parse_format(input_format);
  options.words_path = words;
  options.progress = &progress;
  options.check_in_background = check_in_background;
  Model model = neighbors::load_model(path, options);
  progress.finish();
  if (timings)
    note(fmt::format("timing: loaded {} ({}, {} words x {} dimensions) in {:.3f} s", path,
                     neighbors::format_name(model.format), model.rows, model.dim, seconds_since(start)));
  return model;
}

OutFormat parse_out_format(const std::string& name) {
  if (name == "text") return OutFormat::Text;
  if (name == "tsv") return OutFormat::Tsv;
  if (name == "json") return OutFormat::Json;
  throw UsageError(fmt::format("--format {}: expected text, tsv or json", quote(name)));
}

std::string render(OutFormat format, const Model& model, const Query& query,
                   const std::vector<Match>& matches) {
  std::string out;
  switch (format) {
    case OutFormat::Tsv:
      for (std::size_t i = 0; i < matches.size(); ++i)
        out += fmt::format("{}\t{}\t{}\t{:.6f}\n", query.text, i + 1, model.word(matches[i].row),
                           matches[i].similarity);
      break;
    case OutFormat::Json: {
      nlohmann::json list = nlohmann::json::array();
      for (std::size_t i = 0; i < matches.size(); ++i)
        list.push_back({{"rank", i + 1},
                        {"word", std::string(model.word(matches[i].row))},
                        {"similarity", std::round(static_cast<double>(matches[i].similarity) * 1e6) / 1e6}});
      out = nlohmann::json{{"query", query.text}, {"neighbors", list}}.dump() + "\n";
      break;
    }
    case OutFormat::Text: {
      std::size_t width = 12;
      for (const Match& m : matches) width = std::max(width, model.word(m.row).size());
      out = query.text + "\n";
      for (std::size_t i = 0; i < matches.size(); ++i)
        out += fmt::format("{:4}  {:<{}}  {:.6f}\n", i + 1, model.word(matches[i].row), width,
                           matches[i].similarity);
      out += "\n";
      break;
    }
  }
  return out;
}

struct Session {
  const NeighborsOptions& options;
  const Context& context;
  const Model& model;
  OutFormat format;
  neighbors::Searcher& searcher;
  neighbors::Searcher* cpu_check;
  OutputFile& out;
  int status = kExitOk;
  bool checksum_noted = false;

  // Answers one batch of query lines; `where(i)` names line i for error messages.
  template <typename Where>
  void answer(const std::vector<std::string>& lines, Where where, bool skip_blank) {
    std::vector<Query> queries;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (skip_blank && lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        Query q = neighbors::parse_query(lines[i], model, where(i));
        neighbors::query_vector(model, q, where(i));  // refuse directionless queries here
        queries.push_back(std::move(q));
      } catch (const InputError& e) {
        if (cluster::root()) std::fprintf(stderr, "simkit: error: %s\n", one_line(e.what()).c_str());
        status = kExitBadInput;
      }
    }
    if (queries.empty()) return;
    const auto answers = searcher.search(queries);
    if (context.timings)
      note(fmt::format("timing: {} quer{} in {:.3f} ms on {} ({})", queries.size(),
                       queries.size() == 1 ? "y" : "ies", searcher.last_search_ms(), context.device.name,
                       context.device.cuda ? neighbors::precision_name(searcher.options().precision) : "fp32"));
    if (cpu_check != nullptr) compare(queries, answers);
    const auto check_start = std::chrono::steady_clock::now();
    model.wait_checked();  // no answer from a damaged file
    if (context.timings && !checksum_noted && model.format == neighbors::Format::Skv)
      note(fmt::format("timing: waited {:.3f} s for the model's checksum before the first answer",
                       seconds_since(check_start)));
    checksum_noted = true;
    std::string text;
    for (std::size_t q = 0; q < queries.size(); ++q) text += render(format, model, queries[q], answers[q]);
    out.write(text);
    if (out.is_stdout()) std::fflush(stdout);
  }

  void compare(const std::vector<Query>& queries, const std::vector<std::vector<Match>>& answers) {
    const auto cpu_answers = cpu_check->search(queries);
    // fp32 agrees to rounding; reduced precisions move similarities by about 1e-3.
    const float tolerance = searcher.options().precision == neighbors::Precision::Fp32 ? 1e-5f : 2e-2f;
    std::size_t differ = 0;
    std::string first;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      if (!neighbors::same_answers(answers[q], cpu_answers[q], tolerance)) {
        if (differ++ == 0) first = queries[q].text;
      }
    }
    const double gpu_ms = searcher.last_search_ms(), cpu_ms = cpu_check->last_search_ms();
    note(fmt::format("compare-cpu: {} quer{}: {} {:.3f} ms, cpu {:.3f} ms ({:.1f}x); {}", queries.size(),
                     queries.size() == 1 ? "y" : "ies", context.device.name, gpu_ms, cpu_ms,
                     gpu_ms > 0 ? cpu_ms / gpu_ms : 0.0,
                     differ == 0 ? std::string("the lists agree")
                                 : fmt::format("the lists differ for {} (first: {})", differ, quote(first))));
  }
};

// --device auto's rule (docs/gpu.md; bench/auto_device.sh, measured on an H200 with 16
// cores): the GPU when its start and the model's upload (about 0.2 s more than the CPU's
// whole command) cost less than the CPU's scan, which grows with the model's bytes times
// the queries of a batch (about 7e11 a second on 16 cores); at least 64 queries, which a
// model's upload needs to pay for itself. Standard input from a person (a terminal)
// always takes the GPU when there is one.
constexpr std::size_t kNeighborsGpuQueries = 64;
constexpr double kNeighborsGpuByteQueries = 2e11;

bool gpu_pays_off_for(std::uintmax_t model_bytes, std::size_t queries) {
  return queries >= kNeighborsGpuQueries && static_cast<double>(model_bytes) * static_cast<double>(queries) >= kNeighborsGpuByteQueries;
}

int run_neighbors(NeighborsOptions& options) {
  Context context = make_context(options.common, false);
  parse_device(options.common.device);  // a bad --device refused before the model is read
  const OutFormat format = parse_out_format(options.format);
  if (options.k == 0) throw UsageError("--k must be at least 1");
  if (options.batch == 0) throw UsageError("--batch must be at least 1");
  neighbors::SearchOptions search;
  search.k = options.k;
  search.precision = neighbors::parse_precision(options.precision);
  search.gpu_split = neighbors::parse_gpu_split(options.gpu_split);
  search.memory_budget = context.memory_budget;
  // Queries from the arguments, or standard input's first batch read now: how many there
  // are (with the model's size) decides --device auto, before the model is read.
  // A person at a terminal (rank 0's, under mpirun) gets a prompt and an answer a line;
  // every rank learns which, as every rank reads the same batches.
  const bool from_stdin = options.queries.empty();
  const bool interactive =
      from_stdin && cluster::broadcast_values(std::vector<std::uint64_t>{
                        cluster::root() && ::isatty(STDIN_FILENO) ? 1u : 0u})[0] != 0;
  const bool prompt = interactive && cluster::root();
  LineReader reader(STDIN_FILENO);
  std::vector<std::string> lines;
  bool more_lines = false;
  if (from_stdin && !interactive) more_lines = reader.next_shared_batch(lines, options.batch);
  std::error_code size_error;
  const std::uintmax_t model_bytes = std::filesystem::file_size(options.model, size_error);
  const bool gpu_pays_off =
      interactive || gpu_pays_off_for(size_error ? 0 : model_bytes, from_stdin ? lines.size() : options.queries.size());
  // The GPU's driver starts and its kernels load while the model is read.
  DeviceStart device;
  device.begin(options.common, gpu_pays_off, [search](int index) { neighbors::prepare_gpu(search, index); });

  // Every rank reads the model itself (memory-mapped for .skv and .npy) and keeps its share.
  cluster::check_same_file(options.model);
  if (!options.words.empty()) cluster::check_same_file(options.words);
  const Model model = load(options.model, options.input_format, options.words, context.timings, true);
  const auto wait_start = std::chrono::steady_clock::now();
  context.device = device.device.get();
  search.device = context.device;
  if (context.timings && context.device.cuda)
    note(fmt::format("timing: waited {:.3f} s for {} after the model was read", seconds_since(wait_start),
                     context.device.name));
  if (!context.device.cuda && search.precision != neighbors::Precision::Fp32)
    note(fmt::format("--precision {} applies to the GPU; the CPU computes in fp32", options.precision));
  neighbors::Searcher searcher(model, search);
  if (context.timings && context.device.cuda)
    note(fmt::format("timing: model on {} in {:.1f} ms ({}{})", context.device.name, searcher.setup_ms(),
                     neighbors::precision_name(search.precision),
                     searcher.replicated() ? ", whole on every GPU" : ""));
  std::unique_ptr<neighbors::Searcher> cpu_check;
  if (options.compare_cpu) {
    if (context.device.cuda) {
      neighbors::SearchOptions cpu = search;
      cpu.device = Device{};
      cpu_check = std::make_unique<neighbors::Searcher>(model, cpu);
    } else {
      note("compare-cpu: the search already runs on the CPU; nothing to compare");
    }
  }

  OutputFile out(options.output, cluster::root());
  Session session{options, context, model, format, searcher, cpu_check.get(), out};
  if (!options.queries.empty()) {
    for (std::size_t first = 0; first < options.queries.size(); first += options.batch) {
      const std::vector<std::string> batch(
          options.queries.begin() + static_cast<std::ptrdiff_t>(first),
          options.queries.begin() + static_cast<std::ptrdiff_t>(std::min(options.queries.size(), first + options.batch)));
      session.answer(batch, [&](std::size_t i) { return fmt::format("query {}", first + i + 1); }, false);
    }
  } else {
    const auto answer_lines = [&] {
      const std::size_t first_line = reader.line_number() - lines.size() + 1;
      session.answer(lines, [&](std::size_t i) { return fmt::format("stdin:{}", first_line + i); }, true);
    };
    if (more_lines) answer_lines();  // the batch read before the model
    while (more_lines || interactive) {
      if (prompt) {
        std::fputs("query> ", stderr);
        std::fflush(stderr);
      }
      if (!reader.next_shared_batch(lines, interactive ? 1 : options.batch)) break;
      answer_lines();
    }
    if (prompt) std::fputs("\n", stderr);
  }
  model.wait_checked();
  out.commit();
  return session.status;
}

Format output_format(const ConvertOptions& options) {
  if (!options.to.empty()) {
    const Format format = neighbors::parse_format(options.to);
    if (format == Format::Auto || format == Format::Npy)
      throw UsageError(fmt::format("--to {}: expected skv, glove, word2vec or word2vec-binary", options.to));
    return format;
  }
  const Format format = neighbors::format_of_extension(options.output);
  if (format != Format::Auto && format != Format::Npy) return format;
  throw UsageError(fmt::format("cannot tell the output format from {}: add --to skv|glove|word2vec|"
                               "word2vec-binary",
                               quote(options.output)));
}

int run_convert(ConvertOptions& options) {
  Context context = make_context(options.common);
  const Format to = output_format(options);
  if (to == Format::Skv && (options.output == "-" || options.output.empty()))
    throw UsageError("an .skv model cannot go to standard output: give -o FILE");
  const auto start = std::chrono::steady_clock::now();
  const Model model = load(options.input, options.input_format, options.words, context.timings);
  {
    Progress progress("writing " + std::filesystem::path(options.output).filename().string(),
                      to == Format::Skv ? model.rows * model.dim * sizeof(float) : model.rows,
                      to == Format::Skv ? "B" : "rows");
    neighbors::save_model(model, options.output, to, &progress);
  }
  if (context.timings)
    note(fmt::format("timing: converted {} words x {} dimensions to {} in {:.3f} s", model.rows,
                     model.dim, neighbors::format_name(to), seconds_since(start)));
  return kExitOk;
}

int run_evaluate(const EvaluateOptions& options) {
  const Context context = make_context(options.common);
  const Model model = load(options.model, options.input_format, options.words, context.timings);
  OutputFile out(options.output);
  for (const std::string& gold : options.gold)
    out.write(wordsim::evaluation_line(gold, neighbors::evaluate(model, wordsim::read_gold(gold))));
  out.commit();
  return kExitOk;
}

}  // namespace

Runner add_neighbors_command(CLI::App& app) {
  auto search = std::make_shared<NeighborsOptions>();
  auto convert = std::make_shared<ConvertOptions>();
  auto evaluate = std::make_shared<EvaluateOptions>();

  CLI::App* command = app.add_subcommand(
      "neighbors",
      "Nearest words by cosine similarity, for a word or an expression such as 'king - man + woman'.\n"
      "Queries come from the arguments, or one a line from standard input until it ends.");
  command->footer(
      "Examples:\n"
      "  simkit neighbors --model vectors.vec king 'king - man + woman'\n"
      "  simkit neighbors --model vectors.skv --format tsv < queries.txt\n"
      "  simkit neighbors convert glove.840B.300d.txt -o glove.skv\n"
      "  simkit neighbors evaluate --model vectors.skv EN-WS-353-ALL.txt EN-SIMLEX-999.txt\n"
      "A query's own words are never among its answers. To ask for the word 'convert' or 'evaluate',\n"
      "give it on standard input.");
  command->add_option("-m,--model", search->model,
                      "word vectors: GloVe or word2vec text, word2vec binary, .npy (with --words) or .skv")
      ->required();
  command->add_option("-k,--k", search->k, "neighbours per query")->capture_default_str();
  command->add_option("--format", search->format, "output: text, tsv (query, rank, word, similarity) or json lines")
      ->capture_default_str();
  command->add_option("-o,--output", search->output, "output file (default: standard output)");
  command->add_option("--precision", search->precision,
                      "GPU arithmetic: fp32 (exact), tf32 (tensor cores), fp16 or bf16 (half the memory)")
      ->capture_default_str();
  command->add_option("--gpu-split", search->gpu_split,
                      "several GPUs (in this process or a GPU a rank): rows (each holds 1/N of the model), "
                      "queries (each holds all of it and answers 1/N of every batch) or auto (each holds all "
                      "of it where it takes at most half a GPU's free memory, and batches of 1024 queries a "
                      "GPU or more are shared by queries, smaller ones by rows)")
      ->capture_default_str();
  command->add_option("--words", search->words, "word list of an .npy model, one word a line");
  command->add_option("--input-format", search->input_format,
                      "model format: auto, glove, word2vec, word2vec-binary, npy or skv")
      ->capture_default_str();
  command->add_option("--batch", search->batch, "queries answered together at most")->capture_default_str();
  command->add_flag("--compare-cpu", search->compare_cpu,
                    "also run the CPU path and report both timings and whether the lists agree");
  add_common_options(*command, search->common);
  command->add_option("query", search->queries, "a word or an expression; none: read standard input");
  command->require_subcommand(0, 1);

  CLI::App* sub = command->add_subcommand(
      "convert", "Converts word vectors between formats; .skv loads fastest (memory-mapped, no parsing).");
  sub->add_option("input", convert->input, "the model to read")->required();
  sub->add_option("-o,--output", convert->output, "the file to write")->required();
  sub->add_option("--to", convert->to, "skv, glove, word2vec or word2vec-binary (default: from the extension)");
  sub->add_option("--words", convert->words, "word list of an .npy model");
  sub->add_option("--input-format", convert->input_format, "input format (default: detected)")
      ->capture_default_str();
  add_common_options(*sub, convert->common);
  // The parent's --model is not needed for a conversion.
  sub->preparse_callback([command](std::size_t) { command->get_option("--model")->required(false); });

  CLI::App* eval = command->add_subcommand(
      "evaluate",
      "Spearman's rho of the cosine similarities of word pairs against word-similarity gold standards\n"
      "('word1<TAB>word2<TAB>score' lines), over the pairs whose both words the model has (reported as\n"
      "coverage); prints 'FILE<TAB>spearman<TAB>rho<TAB>covered<TAB>n<TAB>of<TAB>m' as disco evaluate does.");
  eval->add_option("-m,--model", evaluate->model,
                   "word vectors: GloVe or word2vec text, word2vec binary, .npy (with --words) or .skv")
      ->required();
  eval->add_option("gold", evaluate->gold, "gold-standard files")->required();
  eval->add_option("--words", evaluate->words, "word list of an .npy model, one word a line");
  eval->add_option("--input-format", evaluate->input_format, "model format (default: detected)")
      ->capture_default_str();
  eval->add_option("-o,--output", evaluate->output, "output file (default: standard output)");
  add_common_options(*eval, evaluate->common);
  eval->preparse_callback([command](std::size_t) { command->get_option("--model")->required(false); });

  return [sub, eval, search, convert, evaluate]() {
    if (sub->parsed()) return run_convert(*convert);
    if (eval->parsed()) return run_evaluate(*evaluate);
    return run_neighbors(*search);
  };
}

}  // namespace simkit::cli
