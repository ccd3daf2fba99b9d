// simkit bench gemm: the seed's tile study (seed 002, part A) on simkit's tiled product,
// beside cuBLAS in the same run.
#include <map>
#include <sstream>

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
};

int run_gemm(const GemmOptions& options) {
  const Context context = make_context(options.common);
  if (options.format != "tsv" && options.format != "json")
    throw UsageError(fmt::format("--format {}: expected tsv or json", quote(options.format)));
  if (options.reps < 1) throw UsageError("--reps must be at least 1");
  for (const std::size_t s : options.sizes)
    if (s == 0 || s > 32768) throw UsageError(fmt::format("--sizes {}: expected 1 .. 32768", s));
  if (!context.device.cuda) throw UsageError("simkit bench gemm runs on a GPU (--device cuda; see 'simkit devices')");
  gemm::StudyOptions study;
  study.sizes = options.sizes;
  study.reps = options.reps;
  study.device = context.device.index;
  const std::vector<gemm::Timing> timings = gemm::study(study);
  // Each row beside cuBLAS fp32 and TF32 at its size (tensor tiles: cuBLAS TF32 on their
  // layout, C = A . B^T).
  std::map<std::size_t, double> cublas, cublas_tf32, cublas_tf32_nt;
  for (const auto& t : timings) {
    if (t.name == "cuBLAS fp32") cublas[t.size] = t.tflops;
    if (t.name == "cuBLAS tf32") cublas_tf32[t.size] = t.tflops;
    if (t.name == "cuBLAS tf32 A.B^T") cublas_tf32_nt[t.size] = t.tflops;
  }
  const auto of_tf32 = [&](const gemm::Timing& t) {
    const bool nt = t.name.rfind("wgmma", 0) == 0 || t.name == "cuBLAS tf32 A.B^T";
    const double base = nt ? cublas_tf32_nt[t.size] : cublas_tf32[t.size];
    return base > 0 ? t.tflops / base : 0.0;
  };
  OutputFile out(options.output);
  if (options.format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& t : timings)
      rows.push_back({{"kernel", t.name}, {"size", t.size}, {"ms", t.ms}, {"tflops", t.tflops},
                      {"of_cublas_fp32", t.tflops / cublas[t.size]}, {"of_cublas_tf32", of_tf32(t)},
                      {"max_relative_error", t.max_relative_error}});
    out.write(nlohmann::json{{"device", context.device.name}, {"rows", rows}}.dump(2) + "\n");
  } else {
    std::ostringstream text;
    text << "# " << context.device.name << ": C = A B, fp32, n x n x n; tiles TMxTN/BK (a thread's C block, the "
         << "shared-memory depth); wgmma tf32 BMxBN/stages: C = A B^T on tensor cores, beside cuBLAS on that layout\n"
         << "kernel\tn\tms\tTFLOP/s\tof cuBLAS fp32\tof cuBLAS tf32\tmax rel error\n";
    for (const auto& t : timings)
      text << fmt::format("{}\t{}\t{:.3f}\t{:.2f}\t{:.1f}%\t{:.1f}%\t{}\n", t.name, t.size, t.ms, t.tflops,
                          100 * t.tflops / cublas[t.size], 100 * of_tf32(t),
                          t.name.rfind("cuBLAS", 0) == 0 ? std::string("-") : fmt::format("{:.1e}", t.max_relative_error));
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
  g->add_option("-o,--output", options->output, "output file (default: standard output)");
  add_common_options(*g, options->common);
  return [options]() { return run_gemm(*options); };
}

}  // namespace simkit::cli
