// simkit_bench_calls: the calls bench/python_overhead.py times through Python, here in C++
// on the same files, for the Python call overhead (bench/results/python.md): one word's
// neighbours (the query parsed, its direction checked and searched, as the command line
// and WordVectors.neighbors do) and a batch of query vectors (Searcher::search_vectors, as
// WordVectors.search), each the median of repeated calls after a warm-up, wall-clock.
// Unlike the simkit program it never restarts itself for another OpenBLAS kernel (see
// core/blas_kernel.hpp), as a Python process cannot.
//   simkit_bench_calls --model M.skv --queries Q.f32 --word W [--k 10] [--device cpu] [--single-reps 50] [--batch-reps 15]
// Q.f32 holds the query vectors as raw float32, row after row (numpy's tofile). Prints one
// JSON object.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simkit/device.hpp"
#include "simkit/io.hpp"
#include "simkit/neighbors.hpp"
#include "simkit/threads.hpp"

namespace {

using namespace simkit;

template <typename Fn>
double median_ms(std::size_t reps, Fn&& fn) {
  fn();  // warm-up (on a GPU: the first call's allocations)
  std::vector<double> ms;
  for (std::size_t r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the calls of bench/python_overhead.py, timed in C++"};
  std::string model_path, queries_path, word, device_name = "cpu", precision = "fp32";
  std::size_t k = 10, single_reps = 50, batch_reps = 15;
  app.add_option("--model", model_path)->required();
  app.add_option("--queries", queries_path, "raw float32 query rows")->required();
  app.add_option("--word", word, "the word whose neighbours are timed")->required();
  app.add_option("-k", k);
  app.add_option("--device", device_name);
  app.add_option("--precision", precision);
  app.add_option("--single-reps", single_reps);
  app.add_option("--batch-reps", batch_reps);
  CLI11_PARSE(app, argc, argv);
  try {
    const neighbors::Model model = neighbors::load_model(model_path);
    const MappedFile file = MappedFile::open(queries_path);
    const std::size_t rows = file.size() / (sizeof(float) * model.dim);
    std::vector<float> queries(rows * model.dim);
    std::copy_n(reinterpret_cast<const float*>(file.data()), queries.size(), queries.data());

    neighbors::SearchOptions options;
    options.k = k;
    options.device = resolve_device(parse_device(device_name));
    options.precision = neighbors::parse_precision(precision);
    neighbors::Searcher searcher(model, options);
    std::size_t found = 0;
    const double single = median_ms(single_reps, [&] {
      const neighbors::Query query = neighbors::parse_query(word, model, "query 1");
      neighbors::query_vector(model, query, "query 1");
      found += searcher.search(std::span(&query, 1), k)[0].size();
    });
    const double batch = median_ms(batch_reps, [&] { found += searcher.search_vectors(queries, rows, k).size(); });
    const nlohmann::json out{{"device", options.device.name}, {"threads", max_threads()}, {"rows", model.rows},
                             {"dim", model.dim},        {"queries", rows},           {"k", k},
                             {"single_ms", single},     {"batch_ms", batch},         {"found", found}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simkit_bench_calls: %s\n", e.what());
    return 1;
  }
}
