// Search: the CPU path against a float64 brute force, the GPU path against the CPU at
// every precision, and analogies on the bundled real vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "neighbors/search_backends.hpp"
#include "simkit/error.hpp"
#include "simkit/neighbors.hpp"
#include "test_support.hpp"

namespace simkit::neighbors {
namespace {

Model random_model(test::Random& random, std::size_t rows, std::size_t dim) {
  std::vector<std::string> words;
  for (std::size_t i = 0; i < rows; ++i) words.push_back("w" + std::to_string(i));
  std::vector<float> values = random.floats(rows * dim);
  std::fill(values.begin() + 5 * dim, values.begin() + 6 * dim, 0.0f);  // a zero row
  for (std::size_t d = 0; d < dim; ++d) values[7 * dim + d] = values[3 * dim + d] * 2;  // a tie with row 3
  return make_model(std::move(words), std::move(values), dim);
}

const Model& sample_model() {
  static const Model model = load_model((test::source_dir() / "data/samples/vectors.vec").string());
  return model;
}

// Cosine similarity in float64 of every row against each direction; the k best.
std::vector<std::vector<Match>> brute_force(const Model& model, const std::vector<float>& directions,
                                            std::size_t queries, std::size_t k) {
  std::vector<std::vector<Match>> out(queries);
  std::vector<double> sims(model.rows);
  std::vector<std::uint32_t> order(model.rows);
  for (std::size_t q = 0; q < queries; ++q) {
    for (std::size_t r = 0; r < model.rows; ++r) {
      double dot = 0, norm = 0;
      for (std::size_t d = 0; d < model.dim; ++d) {
        dot += static_cast<double>(model.vectors[r * model.dim + d]) * directions[q * model.dim + d];
        norm += static_cast<double>(model.vectors[r * model.dim + d]) * model.vectors[r * model.dim + d];
      }
      sims[r] = norm > 0 ? dot / std::sqrt(norm) : 0.0;
    }
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return sims[a] > sims[b]; });
    for (std::size_t i = 0; i < std::min(k, model.rows); ++i)
      out[q].push_back(Match{order[i], static_cast<float>(sims[order[i]])});
  }
  return out;
}

std::vector<float> random_directions(test::Random& random, std::size_t queries, std::size_t dim) {
  std::vector<float> v = random.floats(queries * dim);
  for (std::size_t q = 0; q < queries; ++q) {
    double n = 0;
    for (std::size_t d = 0; d < dim; ++d) n += v[q * dim + d] * v[q * dim + d];
    for (std::size_t d = 0; d < dim; ++d) v[q * dim + d] = static_cast<float>(v[q * dim + d] / std::sqrt(n));
  }
  return v;
}

void expect_same(const std::vector<std::vector<Match>>& got, const std::vector<std::vector<Match>>& want,
                 float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t q = 0; q < want.size(); ++q) {
    ASSERT_TRUE(same_answers(got[q], want[q], tolerance)) << "query " << q;
  }
}

SearchOptions on(const Device& device, std::size_t k, Precision p = Precision::Fp32, std::size_t budget = 0) {
  SearchOptions o;
  o.k = k;
  o.device = device;
  o.precision = p;
  o.memory_budget = budget;
  return o;
}

Device gpu0() { return resolve_device(DeviceSpec{DeviceSpec::Kind::Cuda, 0, true}); }

TEST(SameAnswers, ToleratesOnlyNearTies) {
  const std::vector<Match> a = {{1, 0.9f}, {2, 0.8f}, {3, 0.8f}, {4, 0.5f}};
  const std::vector<Match> swapped = {{1, 0.9f}, {3, 0.8f}, {2, 0.8f}, {4, 0.5f}};
  const std::vector<Match> other = {{1, 0.9f}, {2, 0.8f}, {3, 0.8f}, {9, 0.5f}};
  const std::vector<Match> cutoff = {{1, 0.9f}, {2, 0.8f}, {3, 0.8f}, {5, 0.5f}};
  EXPECT_TRUE(same_answers(a, swapped, 1e-6f));
  EXPECT_FALSE(same_answers(a, std::vector<Match>(a.begin(), a.end() - 1), 1e-6f));
  EXPECT_TRUE(same_answers(a, other, 1e-6f)) << "a different row at an equal cut-off score";
  EXPECT_FALSE(same_answers({{{1, 0.9f}, {4, 0.5f}}}, {{{4, 0.9f}, {1, 0.5f}}}, 1e-6f));
  EXPECT_TRUE(same_answers(a, cutoff, 1e-6f));
}

TEST(CpuSearch, MatchesFloat64BruteForce) {
  test::Random random;
  const Model model = random_model(random, 3000, 48);
  Searcher searcher(model, on(Device{}, 25));
  for (std::size_t queries : {1, 3, 300}) {
    const std::vector<float> dirs = random_directions(random, queries, model.dim);
    expect_same(searcher.search_vectors(dirs, queries), brute_force(model, dirs, queries, 25), 1e-5f);
  }
}

TEST(CpuSearch, TinyBudgetGivesTheSameAnswers) {
  test::Random random;
  const Model model = random_model(random, 2000, 16);
  const std::vector<float> dirs = random_directions(random, 40, model.dim);
  Searcher big(model, on(Device{}, 10));
  Searcher tiny(model, on(Device{}, 10, Precision::Fp32, 8192));
  expect_same(tiny.search_vectors(dirs, 40), big.search_vectors(dirs, 40), 1e-6f);
}

TEST(CpuSearch, RealVectorsMatchBruteForceAndExcludeQueryWords) {
  const Model& model = sample_model();
  test::Random random;
  Searcher searcher(model, on(Device{}, 10));
  std::vector<Query> queries;
  for (int i = 0; i < 50; ++i)
    queries.push_back(parse_query(std::string(model.word(static_cast<std::size_t>(random.integer(0, 3999)))), model, "q"));
  const auto answers = searcher.search(queries);
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const std::vector<float> dir = query_vector(model, queries[q], "q");
    auto want = brute_force(model, dir, 1, 11)[0];
    want.erase(std::remove_if(want.begin(), want.end(), [&](const Match& m) { return m.row == queries[q].terms[0].row; }),
               want.end());
    want.resize(10);
    EXPECT_TRUE(same_answers(answers[q], want, 1e-5f)) << queries[q].text;
  }
}

TEST(CpuSearch, AnalogyOnBundledVectors) {
  const Model& model = sample_model();
  Searcher searcher(model, on(Device{}, 10));
  const std::vector<Query> queries = {parse_query("king - man + woman", model, "q"),
                                      parse_query("brother - man + woman", model, "q")};
  const auto answers = searcher.search(queries);
  const auto contains = [&](const std::vector<Match>& list, std::string_view word) {
    return std::any_of(list.begin(), list.end(), [&](const Match& m) { return model.word(m.row) == word; });
  };
  EXPECT_TRUE(contains(answers[0], "queen"));
  EXPECT_TRUE(contains(answers[1], "sister"));
  for (const char* own : {"king", "man", "woman"}) EXPECT_FALSE(contains(answers[0], own));
  ASSERT_EQ(answers[0].size(), 10u);
}

struct GpuCase {
  Precision precision;
  float tolerance;
};

void PrintTo(const GpuCase& c, std::ostream* os) { *os << precision_name(c.precision); }

class GpuSearch : public ::testing::TestWithParam<GpuCase> {};

TEST_P(GpuSearch, AgreesWithCpu) {
  SIMKIT_REQUIRE_GPU();
  const GpuCase c = GetParam();
  test::Random random;
  const std::size_t rows = test::quick() ? 6'000 : 50'000;
  const Model model = random_model(random, rows, 300);
  Searcher cpu(model, on(Device{}, 10));
  Searcher gpu(model, on(gpu0(), 10, c.precision));
  // A budget too small for the model (1,200 bytes a row at fp32): streamed in blocks.
  Searcher streamed(model, on(gpu0(), 10, c.precision, rows * 800));
  const std::vector<std::size_t> batches =
      test::quick() ? std::vector<std::size_t>{1, 5, 70} : std::vector<std::size_t>{1, 2, 4, 5, 64, 1100};
  for (std::size_t queries : batches) {
    SCOPED_TRACE(std::to_string(queries) + " queries");
    const std::vector<float> dirs = random_directions(random, queries, model.dim);
    const auto want = cpu.search_vectors(dirs, queries);
    expect_same(gpu.search_vectors(dirs, queries), want, c.tolerance);
    expect_same(streamed.search_vectors(dirs, queries), want, c.tolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, GpuSearch,
                         ::testing::Values(GpuCase{Precision::Fp32, 1e-5f}, GpuCase{Precision::Tf32, 5e-3f},
                                           GpuCase{Precision::Fp16, 5e-3f}, GpuCase{Precision::Bf16, 1e-2f}),
                         [](const auto& param_info) { return std::string(precision_name(param_info.param.precision)); });

// Batches big enough for the fused path (small score tiles make the first block of the
// model small): at fp16/bf16 it filters exactly in its own precision; at fp32/tf32 it
// filters on an fp16 copy with slack and rescores in fp32, so fp32 must still agree with
// the CPU to float rounding. Switched off, the tile path must agree too.
TEST_P(GpuSearch, FusedPathAgreesWithCpu) {
  SIMKIT_REQUIRE_GPU();
  const GpuCase c = GetParam();
  test::Random random;
  const Model model = random_model(random, test::quick() ? 5'000 : 40'000, 300);
  Searcher cpu(model, on(Device{}, 10));
  Searcher gpu(model, on(gpu0(), 10, c.precision));
  const test::ScopedEnv small_tiles("SIMKIT_GPU_TILE_MB", "1");
  for (std::size_t queries : {40, 300}) {
    SCOPED_TRACE(std::to_string(queries) + " queries");
    const std::vector<float> dirs = random_directions(random, queries, model.dim);
    const auto want = cpu.search_vectors(dirs, queries);
    expect_same(gpu.search_vectors(dirs, queries), want, c.tolerance);
    const test::ScopedEnv no_fused("SIMKIT_GPU_FUSED", "0");
    expect_same(gpu.search_vectors(dirs, queries), want, c.tolerance);
  }
}

TEST(GpuSearch, RealVectorsAgreeWithCpuIncludingWordExclusion) {
  SIMKIT_REQUIRE_GPU();
  const Model& model = sample_model();
  Searcher cpu(model, on(Device{}, 10));
  Searcher gpu(model, on(gpu0(), 10));
  std::vector<Query> queries;
  for (std::size_t r = 0; r < model.rows; r += 7) queries.push_back(parse_query(std::string(model.word(r)), model, "q"));
  queries.push_back(parse_query("king - man + woman", model, "q"));
  const auto want = cpu.search(queries);
  const auto got = gpu.search(queries);
  for (std::size_t q = 0; q < queries.size(); ++q) ASSERT_TRUE(same_answers(got[q], want[q], 1e-5f)) << queries[q].text;
  const std::vector<Query> one = {queries.back()};
  EXPECT_TRUE(same_answers(gpu.search(one)[0], want.back(), 1e-5f));
}

// What a command runs on a thread while it reads the model, then the search as usual.
TEST(GpuSearch, PreparedGpuSearchesAsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  const Model& model = sample_model();
  for (const Precision precision : {Precision::Fp32, Precision::Fp16}) {
    SearchOptions options = on(gpu0(), 5);
    options.precision = precision;
    prepare_gpu(options, gpu0().index, model.dim);
    Searcher gpu(model, options);
    Searcher cpu(model, on(Device{}, 5));
    const std::vector<Query> queries = {parse_query("king - man + woman", model, "q")};
    EXPECT_TRUE(same_answers(gpu.search(queries)[0], cpu.search(queries)[0], precision == Precision::Fp32 ? 1e-5f : 2e-2f));
  }
}

// --gpu-split auto: replicas only for several GPUs and a model at most half the smallest
// free memory; their batches shared by queries from kQueriesPerGpu a GPU on.
TEST(GpuSplit, AutomaticChoiceFollowsMemoryAndBatchSize) {
  using detail::split_by_queries;
  using detail::use_replicas;
  EXPECT_EQ(parse_gpu_split("auto"), GpuSplit::Automatic);
  EXPECT_EQ(parse_gpu_split("rows"), GpuSplit::Rows);
  EXPECT_EQ(parse_gpu_split("queries"), GpuSplit::Queries);
  EXPECT_THROW(parse_gpu_split("shards"), UsageError);
  EXPECT_EQ(gpu_split_name(GpuSplit::Queries), "queries");
  EXPECT_FALSE(use_replicas(GpuSplit::Automatic, 1, 10, 100));  // one GPU: nothing to share
  EXPECT_TRUE(use_replicas(GpuSplit::Automatic, 2, 50, 100));
  EXPECT_FALSE(use_replicas(GpuSplit::Automatic, 2, 51, 100));
  EXPECT_FALSE(use_replicas(GpuSplit::Rows, 2, 1, 100));
  EXPECT_TRUE(use_replicas(GpuSplit::Queries, 2, 1000, 100));  // asked for: streamed if need be
  EXPECT_FALSE(split_by_queries(GpuSplit::Automatic, 2 * kQueriesPerGpu - 1, 2));
  EXPECT_TRUE(split_by_queries(GpuSplit::Automatic, 2 * kQueriesPerGpu, 2));
  EXPECT_TRUE(split_by_queries(GpuSplit::Queries, 1, 2));
}

TEST(GpuSplit, PlaceRowsCopiesIntoWiderLists) {
  TopKLists part(2, 2), into(4, 3);
  part.scores = {0.9f, 0.8f, 0.7f, 0.6f};
  part.indices = {5, 6, 7, 8};
  const TopKLists empty = into;
  detail::place_rows(into, 1, part);
  for (std::size_t r : {0u, 3u}) {
    EXPECT_TRUE(std::ranges::equal(into.row_indices(r), empty.row_indices(r)));
    EXPECT_TRUE(std::ranges::equal(into.row_scores(r), empty.row_scores(r)));
  }
  EXPECT_EQ(into.row_indices(1)[0], 5u);
  EXPECT_EQ(into.row_indices(2)[1], 8u);
  EXPECT_EQ(into.row_scores(2)[0], 0.7f);
  EXPECT_EQ(into.row_indices(1)[2], empty.row_indices(1)[2]);
}

// Two workers on one GPU (what --device cuda:0,1 makes of two GPUs): shards, replicas
// sharing a batch by rows (small batches: the rows from an offset) or by queries, and
// replicas streamed through a small budget all give one GPU's answers exactly, at fp32
// and fp16, through score tiles and (small tiles: the first block short of the rows) the
// fused filter.
TEST(GpuSearch, EverySplitGivesOneGpusAnswers) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const std::size_t rows = test::quick() ? 7'001 : 30'001;
  const Model model = random_model(random, rows, 300);
  for (const Precision precision : {Precision::Fp32, Precision::Fp16})
    for (const char* tile_mb : {"32", "1"}) {
      SCOPED_TRACE(std::string(precision_name(precision)) + ", tiles of " + tile_mb + " MiB");
      const test::ScopedEnv tiles("SIMKIT_GPU_TILE_MB", tile_mb);
      Searcher one(model, on(gpu0(), 10, precision));
      const auto two_workers = [&](GpuSplit split, std::size_t budget) {
        SearchOptions options = on(gpu0(), 10, precision, budget);
        options.device.indices = {gpu0().index, gpu0().index};
        options.gpu_split = split;
        return std::make_unique<Searcher>(model, options);
      };
      const auto shards = two_workers(GpuSplit::Rows, 0), automatic = two_workers(GpuSplit::Automatic, 0),
                 replicas = two_workers(GpuSplit::Queries, 0), streamed = two_workers(GpuSplit::Queries, rows * 800);
      EXPECT_FALSE(shards->replicated());
      EXPECT_TRUE(automatic->replicated());
      EXPECT_TRUE(replicas->replicated());
      EXPECT_TRUE(streamed->replicated());
      for (const std::size_t queries : {std::size_t{1}, std::size_t{3}, std::size_t{70}, 2 * kQueriesPerGpu + 5}) {
        SCOPED_TRACE(std::to_string(queries) + " queries");
        const std::vector<float> dirs = random_directions(random, queries, model.dim);
        const auto want = one.search_vectors(dirs, queries);
        for (Searcher* searcher : {shards.get(), automatic.get(), replicas.get(), streamed.get()}) {
          const auto got = searcher->search_vectors(dirs, queries);
          ASSERT_EQ(got.size(), want.size());
          for (std::size_t q = 0; q < queries; ++q) {
            ASSERT_EQ(got[q].size(), want[q].size()) << "query " << q;
            for (std::size_t i = 0; i < want[q].size(); ++i) {
              EXPECT_EQ(got[q][i].row, want[q][i].row) << "query " << q << ", rank " << i;
              EXPECT_EQ(got[q][i].similarity, want[q][i].similarity) << "query " << q << ", rank " << i;
            }
          }
        }
      }
    }
}

}  // namespace
}  // namespace simkit::neighbors
