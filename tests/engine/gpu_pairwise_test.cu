// The GPU pairwise engine against the CPU engine and brute force: integer-valued data,
// so scores are exact and results must be identical, ties and all.
#include <string>

#include <gtest/gtest.h>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "pairwise_fixture.hpp"

namespace simkit {
namespace {

using test::DotData;

__global__ void dot_tile(const float* a, std::size_t rows_a, const float* b, std::size_t rows_b,
                         std::size_t dim, float* tile, std::size_t ld) {
  const std::size_t i = blockIdx.y * static_cast<std::size_t>(blockDim.y) + threadIdx.y;
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= rows_a || j >= rows_b) return;
  float s = 0;
  for (std::size_t d = 0; d < dim; ++d) s += a[i * dim + d] * b[j * dim + d];
  tile[i * ld + j] = s;
}

class DotScorer final : public gpu::BlockScorer {
 public:
  DotScorer(const DotData& d, bool resident) : data_(d) {
    if (resident) {
      b_ = cuda::DeviceBuffer<float>(d.b.size());
      SIMKIT_CUDA_CHECK(cudaMemcpy(b_.get(), d.b.data(), d.b.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
  }
  std::size_t bytes_per_row_a() const override { return data_.dim * sizeof(float); }
  std::size_t bytes_per_row_b() const override { return data_.dim * sizeof(float); }
  bool b_resident() const override { return b_.size() > 0; }
  void load_a(RowRange rows, void* slot, gpu::Stream stream) override {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(slot, data_.a.data() + rows.begin * data_.dim,
                                      rows.size() * data_.dim * sizeof(float), cudaMemcpyHostToDevice, stream));
  }
  void load_b(RowRange rows, void* slot, gpu::Stream stream) override {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(slot, data_.b.data() + rows.begin * data_.dim,
                                      rows.size() * data_.dim * sizeof(float), cudaMemcpyHostToDevice, stream));
  }
  void score(const void* a_slot, RowRange a, const void* b_slot, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    const float* rows_b = b_slot != nullptr ? static_cast<const float*>(b_slot) : b_.get() + b.begin * data_.dim;
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((b.size() + 31) / 32), static_cast<unsigned>((a.size() + 7) / 8));
    dot_tile<<<grid, block, 0, stream>>>(static_cast<const float*>(a_slot), a.size(), rows_b, b.size(),
                                         data_.dim, tile, ld);
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

 private:
  const DotData& data_;
  cuda::DeviceBuffer<float> b_;
};

using Case = test::PairwiseCase;

class GpuPairwise : public ::testing::TestWithParam<Case> {};

TEST_P(GpuPairwise, EqualsBruteForceAndCpuAtAnyBudget) {
  SIMKIT_REQUIRE_GPU();
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
  test::expect_same_result(pairwise_cpu(job, test::dot_scorer(data)), want);

  gpu::Engine engine(0);
  for (bool resident : {true, false}) {
    DotScorer scorer(data, resident);
    // 0 = automatic; a budget of a few KiB forces tiles of a few rows and many blocks.
    for (std::size_t budget : {std::size_t{0}, std::size_t{20} << 20}) {
      SCOPED_TRACE(std::string(resident ? "resident" : "streamed") + " budget " + std::to_string(budget));
      job.memory_budget = budget;
      const PairwiseResult got = engine.run(job, scorer);
      test::expect_same_result(got, want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuPairwise,
    ::testing::Values(Case{1, 1, 1, 1, false, false, false}, Case{1, 5000, 8, 10, false, false, false},
                      Case{37, 2111, 5, 7, false, false, true}, Case{640, 640, 3, 64, false, true, false},
                      Case{900, 900, 4, 9, true, true, true}, Case{750, 750, 6, 5, true, false, true},
                      Case{3, 10000, 2, 200, false, false, false}, Case{1200, 1200, 7, 0, true, true, true},
                      Case{2000, 3000, 4, 33, false, false, false}),
    test::case_name);

TEST(GpuPairwise, SmallBudgetCutsManyBlocks) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const DotData data = test::make_dot_data(random, 3000, 3000, 8, true);
  PairwiseJob job{.rows_a = 3000, .rows_b = 3000, .k = 10, .symmetric = true, .exclude_self = true};
  DotScorer scorer(data, false);
  gpu::Engine engine(0);
  job.memory_budget = (std::size_t{17} << 20) + 3000 * (16 + 10) * 8 + 200 * 1024;  // tiles, state, packed k best
  const BlockPlan plan = engine.plan(job, scorer);
  EXPECT_LT(plan.rows_a_per_block, 3000u);
  const PairwiseResult small = engine.run(job, scorer);
  EXPECT_GT(small.blocks, 3u);
  job.memory_budget = 0;
  const PairwiseResult large = engine.run(job, scorer);
  test::expect_same_result(small, large);
  test::expect_same_result(small, test::reference(data, job));
}

// A symmetric job shared out by share_blocks (ranges apart from each other, some workers
// with none), each share on the GPU, B resident or streamed: the merged results are the
// whole job's.
TEST(GpuPairwise, SharesMergedEqualTheWholeJob) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const DotData data = test::make_dot_data(random, 1200, 1200, 6, true);
  PairwiseJob job{.rows_a = 1200, .rows_b = 1200, .k = 9, .threshold = 4.0f, .symmetric = true, .exclude_self = true};
  const PairwiseResult want = test::reference(data, job);
  gpu::Engine engine(0);
  for (bool resident : {true, false}) {
    DotScorer scorer(data, resident);
    for (std::size_t parts : {2, 3, 11}) {  // ten ranges of 128 rows: with 11 parts one has none
      SCOPED_TRACE(std::string(resident ? "resident, " : "streamed, ") + std::to_string(parts) + " parts");
      std::vector<std::vector<RowRange>> shares;
      for (std::size_t p = 0; p < parts; ++p) shares.push_back(share_blocks(job.rows_a, 256, Share{p, parts}));
      if (parts == 11) {
        EXPECT_TRUE(shares[10].empty());
      }
      test::expect_same_result(
          test::merged_shares(job, shares, [&](const PairwiseJob& mine) { return engine.run(mine, scorer); }), want);
    }
  }
}

}  // namespace
}  // namespace simkit
