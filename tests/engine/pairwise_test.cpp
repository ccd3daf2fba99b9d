// The CPU pairwise engine against brute force, over budgets that force many blocks.
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

TEST(CpuPairwise, RefusesMismatchedSymmetricJob) {
  PairwiseJob job{.rows_a = 3, .rows_b = 4, .k = 1, .symmetric = true};
  EXPECT_THROW(pairwise_cpu(job, [](RowRange, RowRange, float*, std::size_t) {}), UsageError);
}

}  // namespace
}  // namespace simkit
