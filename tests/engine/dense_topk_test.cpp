// dense_top_k: the engine over dense rows against brute force (integer-valued rows, so that
// every product is exact and ties are many), and the GPU against the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <string>

#include "simkit/dense_topk.hpp"
#include "simkit/error.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// Every score in double, larger is better (minus the distance for l2), then the reference
// selection; l2 scores given back as distances.
TopKLists brute_force(const std::vector<float>& a, const std::vector<float>& b, std::size_t dim, Metric metric,
                      std::size_t k) {
  const std::size_t m = a.size() / dim, n = b.size() / dim;
  std::vector<float> scores(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double dot = 0, na = 0, nb = 0, dist = 0;
      for (std::size_t d = 0; d < dim; ++d) {
        const double x = a[i * dim + d], y = b[j * dim + d];
        dot += x * y;
        na += x * x;
        nb += y * y;
        dist += (x - y) * (x - y);
      }
      const double s = metric == Metric::dot ? dot : metric == Metric::l2 ? -dist : na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0;
      scores[i * n + j] = static_cast<float>(s);
    }
  TopKLists lists = topk_reference(scores.data(), m, n, k);
  if (metric == Metric::l2)
    for (float& s : lists.scores) s = s == kEmptyScore ? std::numeric_limits<float>::infinity() : -s;
  return lists;
}

void expect_same(const TopKLists& got, const TopKLists& want, float tolerance) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.k, want.k);
  for (std::size_t r = 0; r < want.rows; ++r)
    for (std::size_t i = 0; i < want.k; ++i) {
      const std::size_t at = r * want.k + i;
      if (tolerance == 0) {
        ASSERT_EQ(got.indices[at], want.indices[at]) << "row " << r << " rank " << i;
      }
      if (want.indices[at] == kNoIndex) {
        ASSERT_EQ(got.indices[at], kNoIndex);
        ASSERT_EQ(got.scores[at], want.scores[at]);
      } else {
        ASSERT_NEAR(got.scores[at], want.scores[at], tolerance) << "row " << r << " rank " << i;
      }
    }
}

struct Shape {
  std::size_t m, n, dim, k;
};
std::string name_of(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.dim) + "_k" + std::to_string(s.k);
}
void PrintTo(const Shape& s, std::ostream* out) { *out << name_of(s); }

class DenseTopK : public ::testing::TestWithParam<Shape> {};

TEST_P(DenseTopK, IntegersEqualBruteForceTiesAndAll) {
  const Shape s = GetParam();
  test::Random random;
  const std::vector<float> a = random.small_integers(s.m * s.dim, -3, 3), b = random.small_integers(s.n * s.dim, -3, 3);
  for (const Metric metric : {Metric::dot, Metric::l2}) {
    SCOPED_TRACE(metric_name(metric));
    const TopKLists want = brute_force(a, b, s.dim, metric, s.k);
    // 0: automatic; 64 KiB: many small blocks.
    for (const std::size_t budget : {std::size_t{0}, std::size_t{64} << 10}) {
      DenseTopKOptions options{.k = s.k, .metric = metric, .memory_budget = budget};
      expect_same(dense_top_k(a.data(), s.m, b.data(), s.n, s.dim, options), want, 0);
    }
  }
}

TEST_P(DenseTopK, CosineOfRandomRowsEqualsBruteForce) {
  const Shape s = GetParam();
  test::Random random;
  const std::vector<float> a = random.floats(s.m * s.dim), b = random.floats(s.n * s.dim);
  DenseTopKOptions options{.k = s.k, .metric = Metric::cosine};
  expect_same(dense_top_k(a.data(), s.m, b.data(), s.n, s.dim, options), brute_force(a, b, s.dim, Metric::cosine, s.k),
              1e-5f);
}

TEST_P(DenseTopK, GpuGivesTheCpusLists) {
  SIMKIT_REQUIRE_GPU();
  const Shape s = GetParam();
  test::Random random;
  const std::vector<float> a = random.small_integers(s.m * s.dim, -3, 3), b = random.small_integers(s.n * s.dim, -3, 3);
  const std::vector<float> fa = random.floats(s.m * s.dim), fb = random.floats(s.n * s.dim);
  for (const Metric metric : {Metric::dot, Metric::cosine, Metric::l2}) {
    SCOPED_TRACE(metric_name(metric));
    DenseTopKOptions cpu{.k = s.k, .metric = metric};
    DenseTopKOptions gpu = cpu;
    gpu.device = 0;
    if (metric != Metric::cosine)  // exact products: identical lists
      expect_same(dense_top_k(a.data(), s.m, b.data(), s.n, s.dim, gpu), dense_top_k(a.data(), s.m, b.data(), s.n, s.dim, cpu), 0);
    expect_same(dense_top_k(fa.data(), s.m, fb.data(), s.n, s.dim, gpu),
                dense_top_k(fa.data(), s.m, fb.data(), s.n, s.dim, cpu), 1e-4f);
    gpu.memory_budget = std::size_t{20} << 20;  // B streamed in blocks
    expect_same(dense_top_k(fa.data(), s.m, fb.data(), s.n, s.dim, gpu),
                dense_top_k(fa.data(), s.m, fb.data(), s.n, s.dim, cpu), 1e-4f);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, DenseTopK,
                         ::testing::Values(Shape{1, 1, 1, 1}, Shape{1, 5000, 7, 10}, Shape{37, 2111, 5, 7},
                                           Shape{300, 40, 16, 50}, Shape{700, 900, 3, 64}),
                         [](const auto& param) { return name_of(param.param); });

TEST(DenseTopK, ZeroRowsScoreZeroInCosine) {
  const std::vector<float> a{0, 0, 1, 0}, b{0, 0, 0, 1, 2, 0};
  const TopKLists got = dense_top_k(a.data(), 2, b.data(), 3, 2, {.k = 3, .metric = Metric::cosine});
  EXPECT_EQ(got.indices, (std::vector<std::uint32_t>{0, 1, 2, 2, 0, 1}));
  EXPECT_EQ(got.scores, (std::vector<float>{0, 0, 0, 1, 0, 0}));
}

TEST(DenseTopK, RefusesBadArguments) {
  const std::vector<float> a{1, 2};
  EXPECT_THROW(dense_top_k(a.data(), 1, a.data(), 1, 2, {.k = 0}), UsageError);
  EXPECT_THROW(dense_top_k(a.data(), 1, a.data(), 1, 0, {.k = 1}), UsageError);
  EXPECT_EQ(parse_metric("l2"), Metric::l2);
  EXPECT_THROW(parse_metric("manhattan"), UsageError);
  if (!cuda_built()) {
    EXPECT_THROW(dense_top_k(a.data(), 1, a.data(), 1, 2, {.k = 1, .device = 0}), UsageError);
  }
}

}  // namespace
}  // namespace simkit
