// Google Benchmark micro-benchmarks of CPU building blocks: top-k selection and the
// text model reader. Run: build/bench/simkit_bench_micro
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "simkit/io.hpp"
#include "simkit/neighbors.hpp"
#include "simkit/topk.hpp"

namespace {

using namespace simkit;

void BM_TopKMerge(benchmark::State& state) {
  const std::size_t cols = static_cast<std::size_t>(state.range(0));
  const std::size_t k = static_cast<std::size_t>(state.range(1));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> scores(cols);
  for (float& s : scores) s = u(rng);
  for (auto _ : state) {
    TopKLists lists(1, k);
    merge_block_topk(scores.data(), 1, cols, cols, 0, 0, false, lists);
    benchmark::DoNotOptimize(lists.indices.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * cols));
}
BENCHMARK(BM_TopKMerge)->Args({1 << 20, 10})->Args({1 << 20, 100})->Args({1 << 20, 1000});

void BM_ReadGloveText(benchmark::State& state) {
  const std::size_t rows = 20000, dim = 300;
  const std::string path = (std::filesystem::temp_directory_path() / "simkit_bench_glove.txt").string();
  {
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<std::string> words;
    std::vector<float> values(rows * dim);
    for (std::size_t i = 0; i < rows; ++i) words.push_back("word" + std::to_string(i));
    for (float& v : values) v = u(rng);
    neighbors::save_model(neighbors::make_model(words, values, dim), path, neighbors::Format::Glove);
  }
  const auto bytes = std::filesystem::file_size(path);
  for (auto _ : state) benchmark::DoNotOptimize(neighbors::load_model(path).rows);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReadGloveText)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
