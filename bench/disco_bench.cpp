// simkit_bench_disco: DISCO end to end and all pairs at the thesis's sizes.
//  --corpus FILE   build a model from a real corpus (MB/s), Spearman against --gold files,
//                  and (on a GPU) every word's top 10 in the sparse form
//  --sizes LIST    all pairs, dense form, top --k, on synthetic MI matrices of N words
//                  (each with --per-word features drawn Zipf-like from --features
//                  columns; values uniform in (0, 5]): GPU fp32, tf32 and fp16 on cuBLAS
//                  and tf32 and fp16 on simkit's fused self-join (time in the engine from
//                  CUDA events, or the self-join's call; the lists compared with fp32's on
//                  the CUDA cores), and the CPU for N up to --cpu-max
// JSON to --json.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "simkit/device.hpp"
#include "simkit/disco.hpp"
#include "simkit/gemm.hpp"
#include "simkit/io.hpp"
#include "timing.hpp"

namespace {

using namespace simkit;
using bench::now_s;

disco::Model synthetic(std::size_t words, std::size_t columns, std::size_t per_word, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  disco::Model m;
  m.window = 4;
  // As in a built model, every word is also a feature word (the columns use the first ones).
  m.feature_words = std::max<std::size_t>(words, (columns + m.relations() - 1) / m.relations());
  std::uniform_real_distribution<float> value(1e-3f, 5.0f);
  // Zipf-like column choice: column = floor(columns^u) - 1 for u uniform in [0, 1).
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::uint32_t> row;
  for (std::size_t w = 0; w < words; ++w) {
    m.words.push_back(fmt::format("w{}", w));
    m.counts.push_back(words - w);
    row.clear();
    for (std::size_t i = 0; i < per_word; ++i)
      row.push_back(static_cast<std::uint32_t>(std::pow(static_cast<double>(columns), u(rng))) - 1);
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    double sum = 0;
    for (const std::uint32_t f : row) {
      m.features.push_back(f);
      m.mi.push_back(value(rng));
      sum += m.mi.back();
    }
    m.offsets.push_back(m.features.size());
    m.mi_sums.push_back(sum);
  }
  return m;
}

double agreement(const TopKLists& a, const TopKLists& b) {
  std::size_t same = 0, total = 0;
  for (std::size_t r = 0; r < a.rows; ++r)
    for (const auto i : a.row_indices(r)) {
      if (i == kNoIndex) continue;
      ++total;
      for (const auto j : b.row_indices(r)) same += i == j;
    }
  return total ? static_cast<double>(same) / total : 1.0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"simkit_bench_disco: DISCO build and all pairs"};
  std::string corpus, json_path, device = "auto";
  std::vector<std::string> gold;
  std::vector<std::size_t> sizes;
  std::size_t columns = 10000, per_word = 200, k = 10, cpu_max = 5000;
  app.add_option("--corpus", corpus, "a real corpus to build a model from");
  app.add_option("--gold", gold, "word-similarity gold standards");
  app.add_option("--sizes", sizes, "synthetic N for all pairs")->delimiter(',');
  app.add_option("--features", columns, "dense columns F")->capture_default_str();
  app.add_option("--per-word", per_word, "features drawn per word")->capture_default_str();
  app.add_option("--k", k, "neighbours per word")->capture_default_str();
  app.add_option("--cpu-max", cpu_max, "largest N also run on the CPU")->capture_default_str();
  app.add_option("--device", device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--json", json_path, "write the results here");
  std::string write_model;
  app.add_option("--write-model", write_model, "write the synthetic model of the first --sizes N (.skd), then stop");
  CLI11_PARSE(app, argc, argv);
  if (!write_model.empty()) {  // the data of the whole-command runs (bench/distributed.sh)
    if (sizes.empty()) throw std::runtime_error("--write-model needs --sizes N");
    disco::write_model(synthetic(sizes[0], columns, per_word, 1), write_model);
    return 0;
  }
  nlohmann::json report;
  const Device d = resolve_device(parse_device(device));
  report["device"] = d.name;

  if (!corpus.empty()) {
    const double start = now_s();
    const disco::Model model = disco::build({corpus}, {});
    const double s = now_s() - start;
    const double mb = static_cast<double>(MappedFile::open(corpus).size()) / 1e6;
    nlohmann::json r = {{"corpus", corpus}, {"mb", mb}, {"build_s", s}, {"mb_per_s", mb / s},
                        {"words", model.size()}, {"features", model.features.size()}};
    fmt::print(stderr, "bench: built {:.1f} MB in {:.2f} s ({:.1f} MB/s): {} words, {} features\n", mb, s, mb / s,
               model.size(), model.features.size());
    for (const std::string& g : gold) {
      const wordsim::Evaluation e = disco::evaluate(model, wordsim::read_gold(g));
      r["gold"][g] = {{"rho", e.rho}, {"covered", e.covered}, {"pairs", e.pairs}};
      fmt::print(stderr, "bench: {}: rho {:.4f} over {} of {} pairs\n", g, e.rho, e.covered, e.pairs);
    }
    if (d.cuda) {
      // Every word's top 10 in the sparse form: the corpus's full feature space.
      disco::AllPairsOptions options;
      options.k = 10;
      options.form = disco::Form::sparse;
      options.device = d.index;
      double ms = 0;
      const double begin = now_s();
      (void)disco::all_pairs(model, options, nullptr, &ms);
      const double wall = now_s() - begin;
      r["sparse_gpu"] = {{"engine_ms", ms}, {"wall_s", wall}};
      fmt::print(stderr, "bench: corpus, all {} words, sparse form on the GPU: {:.1f} ms in the engine, {:.2f} s wall\n",
                 model.size(), ms, wall);
    }
    report["corpus"] = r;
  }

  for (const std::size_t n : sizes) {
    const disco::Model model = synthetic(n, columns, per_word, 7 + n);
    nlohmann::json r = {{"words", n}, {"columns", columns}, {"features", model.features.size()}};
    disco::AllPairsOptions options;
    options.k = k;
    options.features = columns;
    TopKLists fp32;
    if (d.cuda) {
      options.device = d.index;
      // fp32 on the CUDA cores first (the reference lists), then fp32 as split TF32 (the
      // default), then TF32 and fp16 by cuBLAS (the engine) and by simkit's fused
      // self-join (Hopper only).
      struct Variant {
        const char* name;
        disco::Precision precision;
        bool cores;
        disco::ProductKernel kernel;
      };
      using disco::Precision;
      std::vector<Variant> variants{{"gpu_fp32_cores", Precision::fp32, true, disco::ProductKernel::cublas},
                                    {"gpu_fp32", Precision::fp32, false, disco::ProductKernel::cublas},
                                    {"gpu_tf32", Precision::tf32, false, disco::ProductKernel::cublas},
                                    {"gpu_fp16", Precision::fp16, false, disco::ProductKernel::cublas}};
      if (!gemm::tensor_tiles().empty() && k <= static_cast<std::size_t>(gemm::kMaxSelfTop)) {
        variants.push_back({"gpu_tf32_simkit_kernel", Precision::tf32, false, disco::ProductKernel::simkit});
        variants.push_back({"gpu_fp16_simkit_kernel", Precision::fp16, false, disco::ProductKernel::simkit});
        // What auto picks (its probe of both on the first 8,192 words included in the time).
        variants.push_back({"gpu_fp16_auto", Precision::fp16, false, disco::ProductKernel::automatic});
      }
      for (const Variant& v : variants) {
        options.precision = v.precision;
        options.kernel = v.kernel;
        if (v.cores) setenv("SIMKIT_DISCO_FP32", "cores", 1);
        else unsetenv("SIMKIT_DISCO_FP32");
        double ms = 0;
        const double start = now_s();
        TopKLists lists = disco::all_pairs(model, options, nullptr, &ms);
        const double wall = now_s() - start;
        r[v.name] = {{"engine_ms", ms}, {"wall_s", wall}};
        std::string equal;
        if (v.cores) {
          fp32 = std::move(lists);
        } else {
          r[v.name]["top_k_equal_to_fp32_cores"] = agreement(lists, fp32);
          equal = fmt::format(", top-{} equal to fp32 (CUDA cores): {:.4f}", k, agreement(lists, fp32));
        }
        fmt::print(stderr, "bench: N {} {}: {:.1f} ms in the engine, {:.2f} s wall{}\n", n, v.name, ms, wall, equal);
      }
      unsetenv("SIMKIT_DISCO_FP32");
    }
    if (n <= cpu_max) {
      options.device = -1;
      const double start = now_s();
      const TopKLists cpu = disco::all_pairs(model, options);
      const double s = now_s() - start;
      r["cpu_s"] = s;
      if (d.cuda) r["gpu_fp32_equal_to_cpu"] = agreement(fp32, cpu);
      fmt::print(stderr, "bench: N {} CPU dense: {:.2f} s\n", n, s);
    }
    report["sizes"].push_back(r);
  }
  if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
  return 0;
}
