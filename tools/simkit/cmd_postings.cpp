// simkit postings: build an inverted index from text; answer batches of AND queries.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/postings.hpp"
#include "simkit/progress.hpp"

namespace simkit::cli {

namespace {

struct BuildOptions {
  CommonOptions common;
  std::vector<std::string> paths;
  std::string output;
  postings::BuildOptions build;
};

struct QueryOptions {
  CommonOptions common;
  std::string index, exp_index, queries;
  std::string algorithm = "auto";
  std::string gpu_kernel = "flat";
  std::string format = "tsv";
  std::string output = "-";
  bool count = false;
  bool term_ids = false;
  bool keep_case = false;
  bool managed = false;
};

int run_build(const BuildOptions& options) {
  const Context context = make_context(options.common);
  if (!cluster::root()) return kExitOk;  // under mpirun, rank 0 builds alone
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t bytes = 0;
  const std::vector<std::string> files = text_files(options.paths, bytes);
  postings::Index index;
  {
    Progress progress("indexing", bytes, "B");
    index = postings::build_index(files, options.build, &progress);
  }
  postings::write_index(index, options.output);
  if (context.timings)
    note(fmt::format("timing: indexed {} documents ({:.1f} MB) in {:.3f} s: {} terms, {} postings", index.documents,
                     bytes / 1e6, seconds_since(start), index.terms(), index.ids.size()));
  return kExitOk;
}

void render_tsv(const postings::Results& results, bool count_only, OutputFile& out) {
  fmt::memory_buffer buffer;
  for (std::size_t q = 0; q < results.counts.size(); ++q) {
    fmt::format_to(std::back_inserter(buffer), "{}\t{}", q + 1, results.counts[q]);
    if (!count_only)
      for (const postings::DocId id : results.answer(q)) fmt::format_to(std::back_inserter(buffer), "\t{}", id);
    buffer.push_back('\n');
    if (buffer.size() > (1u << 20)) {
      out.write({buffer.data(), buffer.size()});
      buffer.clear();
    }
  }
  out.write({buffer.data(), buffer.size()});
}

void render_json(const postings::Results& results, bool count_only, OutputFile& out) {
  for (std::size_t q = 0; q < results.counts.size(); ++q) {
    nlohmann::json row = {{"query", q + 1}, {"count", results.counts[q]}};
    if (!count_only) row["ids"] = std::vector<postings::DocId>(results.answer(q).begin(), results.answer(q).end());
    out.write(row.dump() + "\n");
  }
}

// --device auto's rule (docs/gpu.md; bench/auto_device.sh on an H200 with 16 cores): the
// Brown Corpus's queries take the GPU's whole command longer than the CPU's up to about
// 80,000 (32,000: 1.42 s against 0.85 s; 128,000: 3.30 s against 3.88 s), its start
// (0.3-0.4 s) paid back at a few microseconds a query; smaller batches stay on the CPU.
constexpr std::size_t kPostingsGpuQueries = 100000;

int run_query(QueryOptions& options) {
  if (options.index.empty() == options.exp_index.empty())
    throw UsageError("give the index with exactly one of --index (simkit's .skp) or --exp-index (the seed's ExpIndex)");
  if (options.format != "tsv" && options.format != "json")
    throw UsageError(fmt::format("--format {}: expected tsv or json", quote(options.format)));
  const postings::Algorithm algorithm = postings::parse_algorithm(options.algorithm);
  if (options.gpu_kernel != "sliced" && options.gpu_kernel != "flat")
    throw UsageError(fmt::format("--gpu-kernel {}: expected sliced or flat", quote(options.gpu_kernel)));
  // A CPU algorithm named with --device auto means the CPU.
  if (algorithm != postings::Algorithm::automatic && options.common.device == "auto") options.common.device = "cpu";
  Context context = make_context(options.common, false);
  parse_device(options.common.device);  // a bad --device refused before the index is read
  const auto start = std::chrono::steady_clock::now();
  // Every rank reads the index and keeps its share of the documents; rank 0 reads the
  // queries (standard input reaches it alone) and hands them to the others.
  const std::string& index_path = options.index.empty() ? options.exp_index : options.index;
  cluster::check_same_file(index_path);
  postings::Index index =
      options.index.empty() ? postings::read_exp_index(index_path) : postings::read_index(index_path);
  const std::size_t terms = index.terms();
  const bool words = !index.vocabulary.empty() && !options.term_ids;
  postings::Queries queries;
  if (cluster::root()) queries = postings::read_queries(options.queries, index, words, options.keep_case);
  queries = postings::broadcast_queries(std::move(queries));
  // Every rank holds the same queries, so every rank decides alike.
  context.device = device_for_job(options.common, queries.size() >= kPostingsGpuQueries);
  postings::DistributedOptions shared;
  shared.algorithm = algorithm;
  if (context.device.cuda) {
    shared.gpus = context.device.indices.empty() ? std::vector<int>{context.device.index} : context.device.indices;
    shared.gpu.kernel = options.gpu_kernel == "flat" ? postings::GpuKernel::flat : postings::GpuKernel::sliced;
    shared.gpu.managed_memory = options.managed;
    shared.gpu.memory_budget = context.memory_budget;
  }
  postings::DistributedIndex searcher(std::move(index), shared);
  const double load_s = seconds_since(start);
  const auto run_start = std::chrono::steady_clock::now();
  double device_ms = -1;
  postings::Results results;
  {
    std::optional<Progress> progress;  // the CPU's (the GPU answers a batch at once)
    if (!context.device.cuda) progress.emplace("queries", queries.size(), "queries");
    results = searcher.intersect(queries, options.count, progress ? &*progress : nullptr, &device_ms);
  }
  const double run_s = seconds_since(run_start);
  OutputFile out(options.output, cluster::root());
  if (options.format == "tsv") render_tsv(results, options.count, out);
  else render_json(results, options.count, out);
  out.commit();
  if (context.timings)
    note(fmt::format("timing: loaded {} lists and {} queries in {:.3f} s; answered them on {} in {:.3f} s "
                     "({:.0f} queries/s){}",
                     terms, queries.size(), load_s, context.device.name, run_s, queries.size() / run_s,
                     device_ms >= 0 ? fmt::format(", {:.3f} ms on the device", device_ms) : ""));
  return kExitOk;
}

}  // namespace

Runner add_postings_command(CLI::App& app) {
  auto build = std::make_shared<BuildOptions>();
  auto query = std::make_shared<QueryOptions>();
  CLI::App* command = app.add_subcommand(
      "postings", "Inverted indexes and conjunctive (AND) queries: which documents hold every term of a query.");
  command->require_subcommand(1);
  command->footer(
      "Examples:\n"
      "  simkit postings build corpus.txt -o corpus.skp          # one document a line\n"
      "  simkit postings query --index corpus.skp --queries q.txt # words a line\n"
      "  simkit postings query --exp-index ExpIndex --queries ExpQuery --algorithm svs\n"
      "  mpirun -np 4 simkit postings query --index corpus.skp --queries q.txt -o answers.tsv\n"
      "Under mpirun (and with --device cuda:all, a worker a GPU) 'query' shares the documents out: every\n"
      "rank reads the index and keeps its share of each list, rank 0 reads the queries and writes the\n"
      "answers, equal to one process's. 'build' runs on rank 0 alone.");

  CLI::App* b = command->add_subcommand(
      "build",
      "Builds an index (.skp) from text files or directories: one document a line (document id =\n"
      "line number - 1, counted across the files in order), or one a file. Words are split at Unicode\n"
      "word boundaries (ICU) and lower-cased.");
  b->add_option("docs", build->paths, "text files (UTF-8) or directories of them")->required();
  b->add_option("-o,--output", build->output, "the index file to write")->required();
  b->add_flag("--document-per-file", build->build.document_per_file, "each file is one document");
  b->add_flag("--keep-case", build->build.keep_case, "do not lower-case words");
  b->add_option("--min-count", build->build.min_count, "leave out terms found in fewer documents")
      ->capture_default_str();
  add_common_options(*b, build->common);

  CLI::App* q = command->add_subcommand(
      "query",
      "Answers a batch of AND queries, one a line: words (an index with a vocabulary) or term ids\n"
      "(the seed's ExpQuery). Output: 'query_no<TAB>count<TAB>id1<TAB>id2...' a query, in order,\n"
      "query_no from 1, ids ascending. A word the index lacks matches nothing.");
  q->add_option("--index", query->index, "simkit's index (.skp, from 'simkit postings build')");
  q->add_option("--exp-index", query->exp_index, "the seed's ExpIndex (uint32 [length][ids...] lists)");
  q->add_option("--queries", query->queries, "query file, one query a line ('-': standard input)")->required();
  q->add_option("--algorithm", query->algorithm,
                "CPU algorithm: svs, adaptive, hash, galloping, simd, bitmap or auto (naming one with --device "
                "auto runs on the CPU)")
      ->capture_default_str();
  q->add_option("--gpu-kernel", query->gpu_kernel, "GPU kernel: flat (whole lists binary-searched) or sliced (each block first narrows the lists)")
      ->capture_default_str();
  q->add_flag("--managed", query->managed, "GPU: the index in unified (managed) memory instead of copied");
  q->add_flag("--count", query->count, "print only the number of documents of each query");
  q->add_flag("--term-ids", query->term_ids, "queries are term ids even though the index has a vocabulary");
  q->add_flag("--keep-case", query->keep_case, "do not lower-case query words");
  q->add_option("--format", query->format, "tsv or json (one object a line)")->capture_default_str();
  q->add_option("-o,--output", query->output, "output file (default: standard output)");
  add_common_options(*q, query->common);

  return [b, build, query]() { return b->parsed() ? run_build(*build) : run_query(*query); };
}

}  // namespace simkit::cli
