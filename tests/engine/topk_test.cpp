// Top-k selection: the heap, block merges and the GPU kernels against a full sort.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "simkit/topk.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

void expect_equal(const TopKLists& got, const TopKLists& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.k, want.k);
  for (std::size_t r = 0; r < want.rows; ++r)
    for (std::size_t i = 0; i < want.k; ++i) {
      ASSERT_EQ(got.indices[r * want.k + i], want.indices[r * want.k + i]) << "row " << r << " rank " << i;
      if (want.indices[r * want.k + i] != kNoIndex) {
        ASSERT_EQ(got.scores[r * want.k + i], want.scores[r * want.k + i]) << "row " << r << " rank " << i;
      }
    }
}

TEST(RanksBefore, HigherScoreThenLowerIndex) {
  EXPECT_TRUE(ranks_before(2.0f, 9, 1.0f, 0));
  EXPECT_TRUE(ranks_before(1.0f, 3, 1.0f, 4));
  EXPECT_FALSE(ranks_before(1.0f, 4, 1.0f, 3));
  EXPECT_FALSE(ranks_before(std::nanf(""), 0, -1e30f, 1));
}

TEST(TopKHeap, MatchesFullSortWithManyTies) {
  test::Random random;
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = static_cast<std::size_t>(random.integer(1, 300));
    const std::size_t k = static_cast<std::size_t>(random.integer(1, 40));
    const std::vector<float> scores = random.small_integers(n, -3, 3);
    TopKHeap heap(k);
    for (std::size_t i = 0; i < n; ++i)
      if (heap.accepts(scores[i], static_cast<std::uint32_t>(i))) heap.push(scores[i], static_cast<std::uint32_t>(i));
    TopKLists got(1, k);
    heap.write_sorted(got.scores.data(), got.indices.data());
    expect_equal(got, topk_reference(scores.data(), 1, n, k));
  }
}

TEST(TopK, NaNIsNeverSelected) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> scores = {nan, 1.0f, nan, -2.0f};
  TopKLists lists(1, 3);
  merge_block_topk(scores.data(), 1, 4, 4, 0, 0, false, lists);
  EXPECT_EQ(lists.indices[0], 1u);
  EXPECT_EQ(lists.indices[1], 3u);
  EXPECT_EQ(lists.indices[2], kNoIndex);
  EXPECT_EQ(lists.filled(0), 2u);
}

TEST(TopK, BlockMergesEqualOneSort) {
  test::Random random;
  const std::size_t rows = 17, cols = 1000, k = 25;
  const std::vector<float> scores = random.small_integers(rows * cols, 0, 20);
  TopKLists merged(rows, k);
  for (std::size_t c0 = 0; c0 < cols;) {
    const std::size_t width = std::min<std::size_t>(cols - c0, static_cast<std::size_t>(random.integer(1, 200)));
    std::vector<float> block(rows * width);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < width; ++c) block[r * width + c] = scores[r * cols + c0 + c];
    merge_block_topk(block.data(), rows, width, width, 0, static_cast<std::uint32_t>(c0), false, merged);
    c0 += width;
  }
  expect_equal(merged, topk_reference(scores.data(), rows, cols, k));
}

TEST(TopK, MergedListsEqualOneSortOnManyRows) {
  // Enough rows that merge_topk splits them among threads; columns in two halves whose
  // lists are merged (as the workers of several GPUs are), with ties across the halves.
  test::Random random;
  const std::size_t rows = 5000, cols = 60, k = 7;
  const std::vector<float> scores = random.small_integers(rows * cols, 0, 9);
  TopKLists left(rows, k), right(rows, k);
  std::vector<float> half(rows * cols / 2);
  for (const std::size_t first : {std::size_t{0}, cols / 2}) {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols / 2; ++c) half[r * cols / 2 + c] = scores[r * cols + first + c];
    merge_block_topk(half.data(), rows, cols / 2, cols / 2, 0, static_cast<std::uint32_t>(first), false,
                     first == 0 ? left : right);
  }
  merge_topk(right, left);
  expect_equal(right, topk_reference(scores.data(), rows, cols, k));
}

TEST(TopK, SkipDiagonal) {
  const std::vector<float> scores = {5, 1, 1, 5};  // 2 x 2, diagonal best
  TopKLists lists(2, 1);
  merge_block_topk(scores.data(), 2, 2, 2, 0, 0, true, lists);
  EXPECT_EQ(lists.indices[0], 1u);
  EXPECT_EQ(lists.indices[1], 0u);
}

class GpuTopK : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t, std::size_t>> {};

TEST_P(GpuTopK, EqualsFullSort) {
  SIMKIT_REQUIRE_GPU();
  const auto [rows, cols, k] = GetParam();
  // Long single rows take the same segmented path at 500,000 columns as at 3,000,001.
  if (test::quick() && rows * cols > 600'000) GTEST_SKIP() << "large shape, skipped in quick mode";
  test::Random random;
  // Few distinct values: most comparisons are ties broken by index.
  std::vector<float> scores = random.small_integers(rows * cols, -50, 50);
  if (cols > 3) scores[1] = std::numeric_limits<float>::quiet_NaN();
  expect_equal(gpu::topk(scores.data(), rows, cols, k, 0), topk_reference(scores.data(), rows, cols, k));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuTopK,
    ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(1, 5, 10), std::make_tuple(3, 100, 10),
                      std::make_tuple(1, 3'000'001, 10), std::make_tuple(2, 1'000'003, 32),
                      std::make_tuple(1, 500'000, 33), std::make_tuple(64, 4099, 16),
                      std::make_tuple(1000, 777, 8), std::make_tuple(5, 70'000, 100),
                      std::make_tuple(7, 9000, 257), std::make_tuple(2, 300'000, 1024),
                      std::make_tuple(1, 700, 1024)),
    [](const auto& param_info) {
      return std::to_string(std::get<0>(param_info.param)) + "x" + std::to_string(std::get<1>(param_info.param)) + "_k" +
             std::to_string(std::get<2>(param_info.param));
    });

}  // namespace
}  // namespace simkit
