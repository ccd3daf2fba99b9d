// The CPU pairwise engine against brute force, over budgets that force many blocks.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pairwise_fixture.hpp"
#include "simkit/error.hpp"
#include "simkit/threads.hpp"

namespace simkit {
namespace {

using test::DotData;

using Case = test::PairwiseCase;

class CpuPairwise : public ::testing::TestWithParam<Case> {};

TEST_P(CpuPairwise, EqualsBruteForceAtAnyBudget) {
  const Case c = GetParam();
  test::Random random;
  const DotData data = test::make_dot_data(random, c.rows_a, c.symmetric ? c.rows_a : c.rows_b, c.dim, c.symmetric);
  PairwiseJob job;
  job.rows_a = data.rows_a;
  job.rows_b = data.rows_b;
  job.k = c.k;
  job.symmetric = c.symmetric;
  job.exclude_self = c.exclude_self;
  if (c.threshold) job.threshold = 4.0f;
  const PairwiseResult want = test::reference(data, job);
  for (std::size_t budget : {std::size_t{0}, std::size_t{64}, std::size_t{4096}, std::size_t{1} << 20}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    job.memory_budget = budget;
    const PairwiseResult got = pairwise_cpu(job, test::dot_scorer(data));
    test::expect_same_result(got, want);
    if (budget == 64 && c.rows_a * c.rows_b > 1000) {
      EXPECT_GT(got.blocks, 10u) << "a tiny budget must cut many blocks";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuPairwise,
    ::testing::Values(Case{1, 1, 1, 1, false, false, false}, Case{1, 500, 8, 10, false, false, false},
                      Case{37, 211, 5, 7, false, false, true}, Case{64, 64, 3, 64, false, true, false},
                      Case{90, 90, 4, 9, true, true, true}, Case{75, 75, 6, 5, true, false, true},
                      Case{3, 1000, 2, 200, false, false, false}, Case{120, 120, 7, 0, true, true, true}),
    test::case_name);

TEST(CpuPairwise, ResultDoesNotDependOnThreads) {
  test::Random random;
  const DotData data = test::make_dot_data(random, 50, 50, 6, true);
  PairwiseJob job{.rows_a = 50, .rows_b = 50, .k = 6, .threshold = 3.0f, .symmetric = true, .memory_budget = 2000};
  const PairwiseResult many = pairwise_cpu(job, test::dot_scorer(data));
  ThreadLimit one(1);
  test::expect_same_result(pairwise_cpu(job, test::dot_scorer(data)), many);
}

TEST(Threads, CoresAllowedAreAmongTheOnlineCores) {
  EXPECT_GE(cores_allowed(), 1u);
  EXPECT_LE(cores_allowed(), cores_online());
}

// Every row of A in exactly one worker's ranges, each worker's ranges in order.
TEST(ShareBlocks, CoverEveryRowOnce) {
  for (std::size_t rows : {0, 1, 127, 129, 4096, 10'000, 200'000})
    for (std::size_t parts : {1, 2, 3, 5, 8})
      for (std::size_t unit : {1, 100, 4096}) {
        SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(parts) + " parts, unit " + std::to_string(unit));
        std::vector<int> owner(rows, -1);
        for (std::size_t p = 0; p < parts; ++p) {
          const std::vector<RowRange> mine = share_blocks(rows, unit, Share{p, parts});
          for (std::size_t r = 0; r < mine.size(); ++r) {
            ASSERT_LT(mine[r].begin, mine[r].end);
            if (r > 0) {
              ASSERT_LE(mine[r - 1].end, mine[r].begin);
            }
            for (std::size_t i = mine[r].begin; i < mine[r].end; ++i) {
              ASSERT_EQ(owner[i], -1) << "row " << i << " given twice";
              owner[i] = static_cast<int>(p);
            }
          }
          // Ranges halved (not below 128 rows) until each worker has four.
          if (unit == 4096 && rows >= 4 * parts * 128) {
            EXPECT_GE(mine.size(), 4u);
          }
        }
        EXPECT_EQ(std::count(owner.begin(), owner.end(), -1), 0);
      }
}

// Dealt back and forth, the ranges of a symmetric job give each worker nearly the same
// pairs (row i meets the rows from i on).
TEST(ShareBlocks, BalanceASymmetricJobsPairs) {
  const std::size_t rows = 200'000;
  for (std::size_t parts : {2, 3, 4, 8}) {
    std::vector<double> pairs(parts, 0);
    for (std::size_t p = 0; p < parts; ++p)
      for (const RowRange& r : share_blocks(rows, 4096, Share{p, parts}))
        for (std::size_t i = r.begin; i < r.end; ++i) pairs[p] += static_cast<double>(rows - i);
    const auto [low, high] = std::minmax_element(pairs.begin(), pairs.end());
    EXPECT_LT(*high / *low, 1.005) << parts << " parts";
  }
}

// A symmetric job shared out by share_blocks: the workers' results merged are the whole
// job's, whatever the budget cuts, also where some workers get no rows.
TEST(ShareBlocks, SharesMergedEqualTheWholeJob) {
  test::Random random;
  const DotData data = test::make_dot_data(random, 300, 300, 6, true);
  PairwiseJob job{.rows_a = 300, .rows_b = 300, .k = 7, .threshold = 4.0f, .symmetric = true, .exclude_self = true};
  const PairwiseResult whole = pairwise_cpu(job, test::dot_scorer(data));
  // (unit 128 and 5 parts: three ranges, so two workers have none and must score nothing)
  for (const auto& [unit, parts] : {std::pair<std::size_t, std::size_t>{16, 1}, {16, 2}, {16, 3}, {16, 4}, {128, 5}})
    for (std::size_t budget : {std::size_t{0}, std::size_t{4096}}) {
      SCOPED_TRACE(std::to_string(parts) + " parts of unit " + std::to_string(unit) + ", budget " +
                   std::to_string(budget));
      std::vector<std::vector<RowRange>> shares;
      for (std::size_t p = 0; p < parts; ++p) shares.push_back(share_blocks(job.rows_a, unit, Share{p, parts}));
      if (unit == 128) {
        EXPECT_TRUE(shares[3].empty() && shares[4].empty());
      }
      PairwiseJob cut = job;
      cut.memory_budget = budget;
      test::expect_same_result(
          test::merged_shares(cut, shares, [&](const PairwiseJob& mine) { return pairwise_cpu(mine, test::dot_scorer(data)); }),
          whole);
    }
}

TEST(CpuPairwise, RefusesRangesOutOfOrder) {
  PairwiseJob job{.rows_a = 10, .rows_b = 10, .k = 1, .symmetric = true};
  job.a_rows = {RowRange{4, 8}, RowRange{2, 3}};
  EXPECT_THROW(pairwise_cpu(job, [](RowRange, RowRange, float*, std::size_t) {}), UsageError);
  job.a_rows = {RowRange{0, 11}};
  EXPECT_THROW(pairwise_cpu(job, [](RowRange, RowRange, float*, std::size_t) {}), UsageError);
}

TEST(CpuPairwise, RefusesMismatchedSymmetricJob) {
  PairwiseJob job{.rows_a = 3, .rows_b = 4, .k = 1, .symmetric = true};
  EXPECT_THROW(pairwise_cpu(job, [](RowRange, RowRange, float*, std::size_t) {}), UsageError);
}

}  // namespace
}  // namespace simkit
