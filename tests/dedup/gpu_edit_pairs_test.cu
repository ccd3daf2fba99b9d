// Each GPU edit-distance kernel against the CPU (itself tested against the reference DP):
// random sets of every length 0..320 and alphabet, the triangle and the rectangle, rates
// that keep few pairs and rates that keep most (the output buffer overflows and the batch
// runs again), and enough rows for several batches.
#include <gtest/gtest.h>

#include "dedup/edit_distance.hpp"
#include "edit_distance_fixture.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

constexpr dedup::EditKernel kKernels[] = {dedup::EditKernel::shared_rows, dedup::EditKernel::global_rows,
                                          dedup::EditKernel::bit_parallel};

TEST(GpuEditPairs, EachKernelEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int letters : {2, 4, 64, 256}) {
    // Quick (compute-sanitizer) shapes still span several 64-bit words per string.
    const int longest = test::quick() ? 200 : 320;
    const dedup::StringSet xs = test::random_set(random, test::quick() ? 40 : 700, longest, letters);
    const dedup::StringSet ys = test::random_set(random, test::quick() ? 30 : 300, longest, letters);
    for (const dedup::PairRule rule : {dedup::PairRule{0.05, 0}, dedup::PairRule{0.05, 24}, dedup::PairRule{0.3, 0},
                                       dedup::PairRule{0.7, 0}}) {
      const auto triangle = dedup::edit_pairs_cpu(xs, xs, true, rule);
      const auto rectangle = dedup::edit_pairs_cpu(xs, ys, false, rule);
      for (const auto kernel : kKernels) {
        double ms = -1;
        EXPECT_EQ(dedup::edit_pairs_gpu(xs, xs, true, rule, kernel, 0, &ms), triangle)
            << dedup::kernel_name(kernel) << ", " << letters << " letters, " << test::describe(rule);
        EXPECT_GE(ms, 0.0);
        EXPECT_EQ(dedup::edit_pairs_gpu(xs, ys, false, rule, kernel, 0), rectangle)
            << dedup::kernel_name(kernel) << ", " << letters << " letters, " << test::describe(rule);
      }
    }
  }
}

// More pairs than one batch holds (2^22), and more found pairs than the first buffer
// (2^20): short strings over two letters at a generous rate.
TEST(GpuEditPairs, ManyBatchesAndAFullBuffer) {
  SIMKIT_REQUIRE_GPU();
  if (test::quick()) GTEST_SKIP() << "full shapes only";
  test::Random random;
  SCOPED_TRACE(random.seed());
  const dedup::StringSet xs = test::random_set(random, 4000, 12, 2);
  const auto want = dedup::edit_pairs_cpu(xs, xs, true, dedup::PairRule{0.5});
  ASSERT_GT(want.size(), std::size_t{1} << 20);
  for (const auto kernel : kKernels)
    EXPECT_EQ(dedup::edit_pairs_gpu(xs, xs, true, dedup::PairRule{0.5}, kernel, 0), want) << dedup::kernel_name(kernel);
}

}  // namespace
}  // namespace simkit
