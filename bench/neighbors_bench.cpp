// simkit_bench_neighbors: cosine top-k over synthetic unit vectors of the seed's size
// (2,196,016 x 300), one query at a time and in batches, on the CPU or a GPU at each
// precision. Answers are checked against the CPU path before anything is timed; GPU
// times come from CUDA events around each search (median of many, after warm-up), and
// the GPU's copy bandwidth and GEMM rates are measured in the same run for the floors.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <oneapi/tbb/parallel_for.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ceilings.hpp"
#include "core/binary_io.hpp"
#include "core/blas_kernel.hpp"
#include "simkit/device.hpp"
#include "simkit/io.hpp"
#include "simkit/neighbors.hpp"
#include "simkit/threads.hpp"

namespace {

using namespace simkit;
using neighbors::Precision;

struct Stats {
  double median = 0, p10 = 0, p90 = 0;
};

Stats stats(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
  return {at(0.5), at(0.1), at(0.9)};
}

// Rows of independent Gaussian values scaled to unit length, in parallel and reproducible.
std::vector<float> unit_rows(std::size_t rows, std::size_t dim, std::uint64_t seed) {
  std::vector<float> v(rows * dim);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 8192), [&](const auto& range) {
    std::mt19937_64 rng(seed ^ (range.begin() * 0x9E3779B97F4A7C15ull));
    std::normal_distribution<float> normal;
    for (std::size_t r = range.begin(); r != range.end(); ++r) {
      double n = 0;
      for (std::size_t d = 0; d < dim; ++d) {
        const float x = normal(rng);
        v[r * dim + d] = x;
        n += static_cast<double>(x) * x;
      }
      const auto inv = static_cast<float>(1.0 / std::sqrt(n));
      for (std::size_t d = 0; d < dim; ++d) v[r * dim + d] *= inv;
    }
  });
  return v;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  restart_with_better_blas(argv);  // as the simkit program does
  CLI::App app{"cosine top-k benchmark over synthetic unit vectors"};
  std::string device_name = "auto", precisions = "fp32,tf32,fp16,bf16", json_path;
  std::size_t rows = 2'196'016, dim = 300, k = 10, batch = 1024, single_reps = 50, batch_reps = 10, check = 64;
  std::size_t threads = 0;
  bool skip_ceilings = false, skip_tiles = false;
  std::string write_model, gpu_split = "auto", time_checksum;
  app.add_option("--write-model", write_model,
                 "write the synthetic model (.skv) and its words' first --check as queries to FILE.queries, then stop");
  app.add_option("--time-checksum", time_checksum,
                 "time an .skv file's checksum both ways (one XXH3 pass; pieces on all cores), then stop");
  app.add_option("--device", device_name);
  app.add_option("--precisions", precisions, "comma-separated (GPU)");
  app.add_option("--gpu-split", gpu_split, "several GPUs: auto, rows or queries (as simkit neighbors)");
  app.add_option("--rows", rows);
  app.add_option("--dim", dim);
  app.add_option("-k", k);
  app.add_option("--batch", batch);
  app.add_option("--single-reps", single_reps);
  app.add_option("--batch-reps", batch_reps);
  app.add_option("--check", check, "queries checked against the CPU path first");
  app.add_option("--threads", threads);
  app.add_option("--json", json_path, "write the results here");
  app.add_flag("--skip-ceilings", skip_ceilings);
  app.add_flag("--skip-tiles", skip_tiles, "do not time the batches again through score tiles alone");
  CLI11_PARSE(app, argc, argv);

  ThreadLimit limit(threads);
  if (!time_checksum.empty()) {  // .skv version 1's checksum against version 2's, the same bytes
    const MappedFile file = MappedFile::open(time_checksum);
    if (file.size() < 8) throw std::runtime_error(time_checksum + ": shorter than a checksum");
    const std::size_t n = file.size() - 8;
    double t = now_ms();
    const std::uint64_t pieces = detail::piece_checksum(file.data(), n);  // first: the pages come in
    const double first_ms = now_ms() - t;
    t = now_ms();
    const std::uint64_t again = detail::piece_checksum(file.data(), n);
    const double pieces_ms = now_ms() - t;
    t = now_ms();
    const std::uint64_t one = XXH3_64bits(file.data(), n);
    const double one_ms = now_ms() - t;
    std::printf("checksum of %zu bytes: pieces on %zu threads %.0f ms (first touch %.0f ms), one pass %.0f ms: "
                "%.1fx; the stored sum %s (pieces %016llx, one pass %016llx)\n",
                n, max_threads(), pieces_ms, first_ms, one_ms, one_ms / pieces_ms,
                pieces == detail::load<std::uint64_t>(file.data() + n) && pieces == again ? "is the pieces'" : "DIFFERS",
                static_cast<unsigned long long>(pieces), static_cast<unsigned long long>(one));
    return 0;
  }
  const Device device = resolve_device(parse_device(device_name));
  std::fprintf(stderr, "bench: %zu x %zu unit vectors on %s, %zu threads\n", rows, dim, device.name.c_str(),
               max_threads());
  double t0 = now_ms();
  std::vector<std::string> words(rows);
  for (std::size_t i = 0; i < rows; ++i) words[i] = "w" + std::to_string(i);
  const neighbors::Model model = neighbors::make_model(std::move(words), unit_rows(rows, dim, 42), dim, "synthetic");
  std::fprintf(stderr, "bench: model ready in %.1f s\n", (now_ms() - t0) / 1e3);
  if (!write_model.empty()) {  // the data of the whole-command runs (bench/distributed.sh)
    neighbors::save_model(model, write_model, neighbors::Format::Skv);
    std::mt19937_64 pick(11);
    std::string queries;
    for (std::size_t q = 0; q < check; ++q) queries += fmt::format("{}\n", model.word(pick() % model.rows));
    std::ofstream(write_model + ".queries") << queries;
    std::fprintf(stderr, "bench: wrote %s and %zu queries in %.1f s\n", write_model.c_str(), check, (now_ms() - t0) / 1e3);
    return 0;
  }

  nlohmann::json out;
  out["device"] = device.name;
  out["rows"] = rows;
  out["dim"] = dim;
  out["k"] = k;
  out["threads"] = max_threads();
  if (device.cuda && !skip_ceilings) {
    const bench::GpuCeilings c = bench::measure_gpu_ceilings(device.index);
    out["ceilings"] = {{"copy_tb_s", c.copy_tb_s},       {"fp32_tflop_s", c.fp32_tflop_s},
                       {"tf32_tflop_s", c.tf32_tflop_s}, {"bf16_tflop_s", c.bf16_tflop_s},
                       {"fp16_tflop_s", c.fp16_tflop_s}};
    std::fprintf(stderr, "bench: ceilings: copy %.2f TB/s, GEMM fp32 %.0f tf32 %.0f fp16 %.0f bf16 %.0f TFLOP/s\n",
                 c.copy_tb_s, c.fp32_tflop_s, c.tf32_tflop_s, c.fp16_tflop_s, c.bf16_tflop_s);
  }

  std::mt19937_64 rng(7);
  std::vector<std::string> names;
  if (device.cuda) {
    for (std::size_t start = 0; start <= precisions.size();) {
      const std::size_t comma = std::min(precisions.find(',', start), precisions.size());
      names.push_back(precisions.substr(start, comma - start));
      start = comma + 1;
    }
  } else {
    names = {"fp32"};
  }

  std::unique_ptr<neighbors::Searcher> cpu_reference;
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& name : names) {
    neighbors::SearchOptions options;
    options.k = k;
    options.device = device;
    options.precision = neighbors::parse_precision(name);
    options.gpu_split = neighbors::parse_gpu_split(gpu_split);
    neighbors::Searcher searcher(model, options);
    nlohmann::json r{{"precision", name}, {"setup_ms", searcher.setup_ms()}, {"replicated", searcher.replicated()}};

    if (device.cuda && check > 0) {
      if (!cpu_reference) {
        neighbors::SearchOptions cpu = options;
        cpu.device = Device{};
        cpu.precision = Precision::Fp32;
        cpu_reference = std::make_unique<neighbors::Searcher>(model, cpu);
      }
      const std::vector<float> dirs = unit_rows(check, dim, rng());
      const auto want = cpu_reference->search_vectors(dirs, check);
      const auto got = searcher.search_vectors(dirs, check);
      const auto got_single = searcher.search_vectors(std::span(dirs).first(dim), 1);
      const float tolerance = options.precision == Precision::Fp32 ? 1e-5f : 2e-2f;
      std::size_t agree = 0;
      for (std::size_t q = 0; q < check; ++q) agree += neighbors::same_answers(got[q], want[q], tolerance);
      const bool single_ok = neighbors::same_answers(got_single[0], want[0], tolerance);
      r["check"] = {{"queries", check}, {"agree", agree}, {"single_agrees", single_ok}, {"tolerance", tolerance}};
      std::fprintf(stderr, "bench: %s: %zu of %zu answers agree with the CPU (tolerance %g)\n", name.c_str(), agree,
                   check, tolerance);
    }

    // One query at a time: a fresh direction each repetition.
    const std::size_t warm = device.cuda ? 5 : 1;
    std::vector<double> device_ms, wall_ms;
    for (std::size_t i = 0; i < warm + single_reps; ++i) {
      const std::vector<float> dir = unit_rows(1, dim, rng());
      const double start = now_ms();
      searcher.search_vectors(dir, 1);
      const double wall = now_ms() - start;
      if (i < warm) continue;
      wall_ms.push_back(wall);
      device_ms.push_back(searcher.last_search_ms());
    }
    const Stats single = stats(device_ms), single_wall = stats(wall_ms);
    r["single"] = {{"reps", single_reps},         {"median_ms", single.median},     {"p10_ms", single.p10},
                   {"p90_ms", single.p90},        {"wall_median_ms", single_wall.median}};

    // Batches: fresh queries each repetition.
    std::vector<std::vector<float>> batches;
    for (int i = 0; i < 3; ++i) batches.push_back(unit_rows(batch, dim, rng()));
    const auto time_batches = [&] {
      // The device's time (the slowest GPU's events) and the call's whole time (host
      // clock: with several GPUs, their lists' merge and exact rescoring too).
      std::vector<double> batch_ms, batch_wall_ms;
      for (std::size_t i = 0; i < (device.cuda ? 2 : 0) + batch_reps; ++i) {
        const double start = now_ms();
        searcher.search_vectors(batches[i % batches.size()], batch);
        const double wall = now_ms() - start;
        if (device.cuda && i < 2) continue;
        batch_ms.push_back(device.cuda ? searcher.last_search_ms() : wall);
        batch_wall_ms.push_back(wall);
      }
      if (batch_ms.empty()) batch_ms.push_back(0), batch_wall_ms.push_back(0);
      const Stats b = stats(batch_ms), w = stats(batch_wall_ms);
      return nlohmann::json{{"size", batch},
                            {"reps", batch_reps},
                            {"median_ms", b.median},
                            {"p10_ms", b.p10},
                            {"p90_ms", b.p90},
                            {"queries_per_s", batch / (b.median / 1e3)},
                            {"wall_median_ms", w.median},
                            {"wall_queries_per_s", batch / (w.median / 1e3)}};
    };
    r["batch"] = time_batches();
    const double qps = r["batch"]["queries_per_s"].get<double>();
    std::fprintf(stderr,
                 "bench: %s: one query %.3f ms (wall %.3f); batch of %zu %.2f ms = %.0f queries/s (wall %.2f ms = "
                 "%.0f queries/s)\n",
                 name.c_str(), single.median, single_wall.median, batch, r["batch"]["median_ms"].get<double>(), qps,
                 r["batch"]["wall_median_ms"].get<double>(), r["batch"]["wall_queries_per_s"].get<double>());
    if (device.cuda && !skip_tiles) {
      // The same batches through cuBLAS score tiles and the selection kernel (the
      // fused kernel switched off): the baseline of the fused path, in the same run.
      setenv("SIMKIT_GPU_FUSED", "0", 1);
      r["batch_tiles"] = time_batches();
      unsetenv("SIMKIT_GPU_FUSED");
      const double tiles_qps = r["batch_tiles"]["queries_per_s"].get<double>();
      std::fprintf(stderr, "bench: %s: batch through score tiles %.0f queries/s; fused %.2fx\n", name.c_str(),
                   tiles_qps, qps / tiles_qps);
    }
    results.push_back(r);
  }
  out["results"] = results;

  std::printf("%-6s %12s %12s %14s %14s %16s\n", "prec", "one query ms", "wall ms", "batch q/s", "wall q/s",
              "tiles-only q/s");
  for (const auto& r : results)
    std::printf("%-6s %12.3f %12.3f %14.0f %14.0f %16.0f\n", r["precision"].get<std::string>().c_str(),
                r["single"]["median_ms"].get<double>(), r["single"]["wall_median_ms"].get<double>(),
                r["batch"]["queries_per_s"].get<double>(), r["batch"]["wall_queries_per_s"].get<double>(),
                r.contains("batch_tiles") ? r["batch_tiles"]["queries_per_s"].get<double>() : 0.0);
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
