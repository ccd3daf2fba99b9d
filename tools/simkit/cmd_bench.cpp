// simkit bench gemm: the seed's tile study (seed 002, part A) on simkit's tiled product,
// beside cuBLAS in the same run.
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"
#include "simkit/io.hpp"

namespace simkit::cli {

namespace {

struct GemmOptions {
  CommonOptions common;
  std::vector<std::size_t> sizes{512, 8192};
  int reps = 5;
  std::string format = "tsv";
  std::string output = "-";
  std::string study = "tiles";
  gemm::FusedOptions fused;
};

// The fused jobs' table: each beside its cuBLAS + select path.
std::string fused_table(const std::string& device, const std::vector<gemm::FusedTiming>& timings, bool json) {
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& t : timings)
      rows.push_back({{"job", t.job}, {"m", t.m}, {"n", t.n}, {"k", t.k}, {"fused_ms", t.fused_ms},
                      {"cublas_select_ms", t.cublas_ms}, {"speedup", t.cublas_ms / t.fused_ms},
                      {"same_columns", t.same_columns}, {"max_score_difference", t.max_score_difference}});
    return nlohmann::json{{"device", device}, {"fused", rows}}.dump(2) + "\n";
  }
  std::ostringstream text;
  text << "# " << device << ": fused top k (simkit's tensor-core kernel, scores never written) against cuBLAS in "
       << "64 MiB tiles + scores + selection, in TF32 unless the job names fp16; the self-join scores each pair "
       << "once, its baseline the pairwise engine's symmetric blocks; same inputs\n"
       << "job\tm\tn\tk\tfused ms\tcuBLAS+select ms\tspeedup\tsame columns\tmax score diff\n";
  for (const auto& t : timings)
    text << fmt::format("{}\t{}\t{}\t{}\t{:.2f}\t{:.2f}\t{:.2f}x\t{:.4f}\t{:.1e}\n", t.job, t.m, t.n, t.k, t.fused_ms,
                        t.cublas_ms, t.cublas_ms / t.fused_ms, t.same_columns, t.max_score_difference);
  return text.str();
}

int run_gemm(const GemmOptions& options) {
  const Context context = make_context(options.common);
  if (options.format != "tsv" && options.format != "json")
    throw UsageError(fmt::format("--format {}: expected tsv or json", quote(options.format)));
  if (options.reps < 1) throw UsageError("--reps must be at least 1");
  for (const std::size_t s : options.sizes)
    if (s == 0 || s > 32768) throw UsageError(fmt::format("--sizes {}: expected 1 .. 32768", s));
  if (!context.device.cuda) throw UsageError("simkit bench gemm runs on a GPU (--device cuda; see 'simkit devices')");
  if (options.study != "tiles" && options.study != "fused")
    throw UsageError(fmt::format("--study {}: expected tiles or fused", quote(options.study)));
  if (options.study == "fused") {
    if (options.fused.top < 1 || options.fused.top > gemm::kMaxFusedTop)
      throw UsageError(fmt::format("--top {}: expected 1 .. {}", options.fused.top, gemm::kMaxFusedTop));
    if (options.fused.dims % 4 != 0)
      throw UsageError(fmt::format("--dims {}: expected a multiple of 4 (the tensor-core kernel's rows)",
                                   options.fused.dims));
    gemm::FusedOptions fused = options.fused;
    fused.reps = options.reps;
    fused.device = context.device.index;
    OutputFile out(options.output);
    out.write(fused_table(context.device.name, gemm::fused_study(fused), options.format == "json"));
    out.commit();
    return kExitOk;
  }
  gemm::StudyOptions study;
  study.sizes = options.sizes;
  study.reps = options.reps;
  study.device = context.device.index;
  const std::vector<gemm::Timing> timings = gemm::study(study);
  // Each row beside cuBLAS at its size: fp32 and TF32 (on the A.B^T layout for the
  // tensor tiles and the A.B^T rows), and fp16 rows beside cuBLAS fp16.
  std::map<std::pair<std::string, std::size_t>, double> cublas;  // (row, size) -> TFLOP/s
  for (const auto& t : timings)
    if (t.name.rfind("cuBLAS", 0) == 0) cublas[{t.name, t.size}] = t.tflops;
  // The share of `base` (or of `fallback` where the study has no `base` row at that size).
  const auto share = [&](const gemm::Timing& t, const std::string& base, const std::string& fallback = "") {
    auto it = cublas.find({base, t.size});
    if (it == cublas.end()) it = cublas.find({fallback, t.size});
    return it != cublas.end() && it->second > 0 ? t.tflops / it->second : 0.0;
  };
  const auto on_nt = [](const gemm::Timing& t) {
    return t.name.rfind("wgmma", 0) == 0 || t.name.find("A.B^T") != std::string::npos;
  };
  const auto of_fp32 = [&](const gemm::Timing& t) {
    return share(t, on_nt(t) ? "cuBLAS fp32 A.B^T" : "cuBLAS fp32", "cuBLAS fp32");
  };
  const auto of_tf32 = [&](const gemm::Timing& t) {
    return share(t, on_nt(t) ? "cuBLAS tf32 A.B^T" : "cuBLAS tf32");
  };
  // -1: not an fp16 row.
  const auto of_fp16 = [&](const gemm::Timing& t) {
    const double s = share(t, "cuBLAS fp16 A.B^T");
    return t.name.find("fp16") != std::string::npos && s > 0 ? s : -1.0;
  };
  OutputFile out(options.output);
  if (options.format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& t : timings)
      rows.push_back({{"kernel", t.name}, {"size", t.size}, {"ms", t.ms}, {"tflops", t.tflops},
                      {"of_cublas_fp32", of_fp32(t)}, {"of_cublas_tf32", of_tf32(t)}, {"of_cublas_fp16", of_fp16(t)},
                      {"max_relative_error", t.max_relative_error}, {"float64_error", t.float64_error}});
    out.write(nlohmann::json{{"device", context.device.name}, {"rows", rows}}.dump(2) + "\n");
  } else {
    std::ostringstream text;
    text << "# " << context.device.name << ": C = A B, fp32, n x n x n; tiles TMxTN/BK (a thread's C block, the "
         << "shared-memory depth); wgmma tf32|fp16 BMxBN/stages: C = A B^T on tensor cores, beside cuBLAS on that "
         << "layout\n"
         << "kernel\tn\tms\tTFLOP/s\tof cuBLAS fp32\tof cuBLAS tf32\tmax rel error\terror vs float64\tof cuBLAS fp16\n";
    for (const auto& t : timings)
      text << fmt::format("{}\t{}\t{:.3f}\t{:.2f}\t{:.1f}%\t{:.1f}%\t{}\t{}\t{}\n", t.name, t.size, t.ms, t.tflops,
                          100 * of_fp32(t), 100 * of_tf32(t),
                          t.name.rfind("cuBLAS", 0) == 0 ? std::string("-") : fmt::format("{:.1e}", t.max_relative_error),
                          t.float64_error < 0 ? std::string("-") : fmt::format("{:.1e}", t.float64_error),
                          of_fp16(t) < 0 ? std::string("-") : fmt::format("{:.1f}%", 100 * of_fp16(t)));
    out.write(text.str());
  }
  out.commit();
  return kExitOk;
}

}  // namespace

Runner add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Measures simkit's kernels.");
  bench->require_subcommand(1);
  auto options = std::make_shared<GemmOptions>();
  CLI::App* g = bench->add_subcommand(
      "gemm",
      "The seed's tile study: simkit's tiled product (each thread a TM x TN block of C in registers, a BK-deep "
      "slice in shared memory) at every tile in the grid, beside cuBLAS fp32 and TF32, each checked against cuBLAS.");
  g->add_option("--sizes", options->sizes, "square sizes n (C = A B, n x n x n)")->delimiter(',')->capture_default_str();
  g->add_option("--reps", options->reps, "timed runs a kernel (the median is kept)")->capture_default_str();
  g->add_option("--format", options->format, "tsv or json")->capture_default_str();
  g->add_option("--study", options->study,
                "tiles: the tile study at --sizes; fused: the fused top-k jobs (cosine and squared distance of "
                "--queries x --rows x --dims, Lin of --lin-words x --lin-features, and Lin's self-join in TF32 and "
                "fp16) beside cuBLAS + select")
      ->capture_default_str();
  g->add_option("--queries", options->fused.queries, "fused: rows of A (the queries)")->capture_default_str();
  g->add_option("--rows", options->fused.rows, "fused: rows of B searched")->capture_default_str();
  g->add_option("--dims", options->fused.dims, "fused: their length (a multiple of 4)")->capture_default_str();
  g->add_option("--lin-words", options->fused.lin_words, "fused: DISCO words of the Lin job (0: none)")
      ->capture_default_str();
  g->add_option("--lin-features", options->fused.lin_features, "fused: features a word (rows padded to multiples of 64, as DISCO pads them)")
      ->capture_default_str();
  g->add_option("--top", options->fused.top, "fused: k of the top k")->capture_default_str();
  g->add_option("-o,--output", options->output, "output file (default: standard output)");
  add_common_options(*g, options->common);
  return [options]() { return run_gemm(*options); };
}

}  // namespace simkit::cli
