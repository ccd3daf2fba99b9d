// The fused path of the GPU engine (cuda::dot_candidates + merge_candidates) against
// brute force. Integer-valued rows are exact in fp16 and bf16 and their dot products
// exact in fp32, so the answers must be identical, ties and all, whatever the order of
// the tensor cores' sums.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstring>

#include "core/cuda/check.hpp"
#include "engine/cuda/dot_candidates.hpp"
#include "core/cuda/memory.hpp"
#include "pairwise_fixture.hpp"

namespace simkit {
namespace {

using test::DotData;

// Rows of `dim` halves padded to a 16-byte stride, as the neighbours index stores them.
std::vector<std::uint16_t> to_half_rows(const std::vector<float>& rows, std::size_t dim, std::size_t stride,
                                        cuda::HalfType type) {
  const std::size_t n = rows.size() / dim;
  std::vector<std::uint16_t> out(n * stride, 0);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t d = 0; d < dim; ++d) {
      const float x = rows[r * dim + d];
      if (type == cuda::HalfType::Fp16) {
        const __half h = __float2half_rn(x);
        std::memcpy(&out[r * stride + d], &h, 2);
      } else {
        const __nv_bfloat16 h = __float2bfloat16_rn(x);
        std::memcpy(&out[r * stride + d], &h, 2);
      }
    }
  return out;
}

template <typename T>
__global__ void half_dot_tile(const T* a, std::size_t rows_a, const T* b, std::size_t rows_b, std::size_t dim,
                              std::size_t stride, float* tile, std::size_t ld) {
  const std::size_t i = blockIdx.y * static_cast<std::size_t>(blockDim.y) + threadIdx.y;
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= rows_a || j >= rows_b) return;
  float s = 0;
  for (std::size_t d = 0; d < dim; ++d) s += static_cast<float>(a[i * stride + d]) * static_cast<float>(b[j * stride + d]);
  tile[i * ld + j] = s;
}

class HalfDotScorer final : public gpu::BlockScorer {
 public:
  HalfDotScorer(const DotData& d, cuda::HalfType type)
      : dim_(d.dim), stride_((d.dim + 7) / 8 * 8), type_(type), a_(to_half_rows(d.a, d.dim, stride_, type)) {
    const auto b = to_half_rows(d.b, d.dim, stride_, type);
    b_ = cuda::DeviceBuffer<std::uint16_t>(b.size());
    SIMKIT_CUDA_CHECK(cudaMemcpy(b_.get(), b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  }
  std::size_t bytes_per_row_a() const override { return stride_ * 2; }
  std::size_t bytes_per_row_b() const override { return stride_ * 2; }
  bool b_resident() const override { return true; }
  void load_a(RowRange rows, void* slot, gpu::Stream stream) override {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(slot, a_.data() + rows.begin * stride_, rows.size() * stride_ * 2,
                                      cudaMemcpyHostToDevice, stream));
  }
  void load_b(RowRange, void*, gpu::Stream) override { FAIL() << "B is resident"; }
  void score(const void* a_slot, RowRange a, const void*, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((b.size() + 31) / 32), static_cast<unsigned>((a.size() + 7) / 8));
    if (type_ == cuda::HalfType::Fp16)
      half_dot_tile<<<grid, block, 0, stream>>>(static_cast<const __half*>(a_slot), a.size(),
                                                reinterpret_cast<const __half*>(b_.get() + b.begin * stride_),
                                                b.size(), dim_, stride_, tile, ld);
    else
      half_dot_tile<<<grid, block, 0, stream>>>(static_cast<const __nv_bfloat16*>(a_slot), a.size(),
                                                reinterpret_cast<const __nv_bfloat16*>(b_.get() + b.begin * stride_),
                                                b.size(), dim_, stride_, tile, ld);
    SIMKIT_CUDA_CHECK_LAUNCH();
  }
  bool offers_candidates() const override { return cuda::dot_candidates_supports(stride_); }
  void offer_candidates(const void* a_slot, RowRange a, RowRange b, const float* state_scores,
                        const std::uint32_t* state_indices, int width, const gpu::CandidateLists& lists,
                        gpu::Stream stream) override {
    const cuda::TopKState state{const_cast<float*>(state_scores), const_cast<std::uint32_t*>(state_indices),
                                a.end, width};
    cuda::dot_candidates(type_, a_slot, a.size(), b_.get() + b.begin * stride_, b.size(), b.begin, stride_,
                         a.begin, state, cuda::Filter{}, lists, stream);
  }

 private:
  std::size_t dim_, stride_;
  cuda::HalfType type_;
  std::vector<std::uint16_t> a_;
  cuda::DeviceBuffer<std::uint16_t> b_;
};

struct FusedCase {
  std::size_t rows_a, rows_b, dim, k;
  int range;   // values in [-range, range]
  bool fused;  // false: rows too long for the fused kernel, the engine scores tiles
};

void PrintTo(const FusedCase& c, std::ostream* os) {
  *os << c.rows_a << "x" << c.rows_b << " dim " << c.dim << " k " << c.k << " range " << c.range;
}

// Runs the job fused and with the fused path disabled; both must equal brute force.
void expect_fused_and_tiles_exact(const DotData& data, std::size_t k, bool expect_fused) {
  PairwiseJob job{.rows_a = data.rows_a, .rows_b = data.rows_b, .k = k};
  const PairwiseResult want = test::reference(data, job);
  // Small score tiles, so that most of B goes through the fused path even in small tests.
  const test::ScopedEnv small_tiles("SIMKIT_GPU_TILE_MB", "1");
  gpu::Engine engine(0);
  for (auto type : {cuda::HalfType::Fp16, cuda::HalfType::Bf16}) {
    SCOPED_TRACE(type == cuda::HalfType::Fp16 ? "fp16" : "bf16");
    HalfDotScorer scorer(data, type);
    const PairwiseResult got = engine.run(job, scorer);
    EXPECT_EQ(got.fused, expect_fused);
    test::expect_same_result(got, want);
    // Disabled, the tile path gives the same answer.
    const test::ScopedEnv no_fused("SIMKIT_GPU_FUSED", "0");
    const PairwiseResult tiles = engine.run(job, scorer);
    EXPECT_FALSE(tiles.fused);
    test::expect_same_result(tiles, want);
  }
}

class GpuFused : public ::testing::TestWithParam<FusedCase> {};

TEST_P(GpuFused, EqualsBruteForce) {
  SIMKIT_REQUIRE_GPU();
  const FusedCase c = GetParam();
  // Under compute-sanitizer (quick mode) the largest brute-force references cost minutes.
  if (test::quick() && c.rows_a * c.rows_b * c.dim > 1'000'000'000) GTEST_SKIP() << "large case skipped in quick mode";
  test::Random random;
  const DotData data{c.rows_a, c.rows_b, c.dim, random.small_integers(c.rows_a * c.dim, -c.range, c.range),
                     random.small_integers(c.rows_b * c.dim, -c.range, c.range)};
  expect_fused_and_tiles_exact(data, c.k, c.fused);
}

// The first block of B (which sets the bars) scores 0 everywhere and every later row
// the same positive score: thousands of candidates a row, more than the lists hold, so
// the engine must notice and score tiles instead.
TEST(GpuFused, OverflowingListsFallBackToTiles) {
  SIMKIT_REQUIRE_GPU();
  const std::size_t rows_a = 40, rows_b = 20000, dim = 16;  // first block: 6553 rows
  test::Random random;
  DotData data{rows_a, rows_b, dim, random.small_integers(rows_a * dim, 1, 3), std::vector<float>(rows_b * dim, 0)};
  for (std::size_t j = rows_b / 2; j < rows_b; ++j)
    for (std::size_t d = 0; d < dim; ++d) data.b[j * dim + d] = 1;
  expect_fused_and_tiles_exact(data, 10, false);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuFused,
                         ::testing::Values(FusedCase{100, 20000, 300, 10, 30, true},
                                           FusedCase{129, 9001, 8, 5, 60, true},
                                           FusedCase{300, 30000, 520, 1, 20, true},
                                           FusedCase{64, 7000, 72, 64, 40, true},
                                           FusedCase{1024, 5000, 16, 10, 2, true},
                                           FusedCase{257, 3000, 1000, 10, 20, false}));

}  // namespace
}  // namespace simkit
