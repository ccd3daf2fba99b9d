// simkit's tiled product (include/simkit/gemm.hpp) at every tile of the study's grid
// against a float64 product on the CPU, on shapes that are no multiple of any tile (1 x 1
// x 1, long and skinny ones among them); the output is poisoned with NaN first, so an
// entry left unwritten fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

TEST(GpuGemm, EveryTileEqualsTheProductOnAnyShape) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  struct Shape {
    std::size_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1}, {7, 13, 5}, {130, 70, 33}, {1, 1000, 64}, {1000, 1, 64}, {257, 129, 300}, {3, 2, 0}};
  ASSERT_FALSE(gemm::tiles().empty());
  for (const Shape& s : shapes) {
    const std::vector<float> a = random.floats(s.m * s.k), b = random.floats(s.k * s.n);
    // The float64 product, and the bound on fp32's rounding of each entry.
    std::vector<double> want(s.m * s.n, 0.0), bound(s.m * s.n, 0.0);
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t l = 0; l < s.k; ++l)
        for (std::size_t j = 0; j < s.n; ++j) {
          want[i * s.n + j] += double(a[i * s.k + l]) * b[l * s.n + j];
          bound[i * s.n + j] += std::fabs(double(a[i * s.k + l]) * b[l * s.n + j]);
        }
    cuda::DeviceBuffer<float> da(std::max<std::size_t>(a.size(), 1)), db(std::max<std::size_t>(b.size(), 1)),
        dc(s.m * s.n);
    SIMKIT_CUDA_CHECK(cudaMemcpy(da.get(), a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    SIMKIT_CUDA_CHECK(cudaMemcpy(db.get(), b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    for (const gemm::Tile& tile : gemm::tiles()) {
      SCOPED_TRACE(testing::Message() << tile.name() << " on " << s.m << " x " << s.n << " x " << s.k);
      SIMKIT_CUDA_CHECK(cudaMemset(dc.get(), 0xFF, s.m * s.n * sizeof(float)));
      gemm::multiply(tile, s.m, s.n, s.k, da.get(), db.get(), dc.get());
      std::vector<float> got(s.m * s.n);
      SIMKIT_CUDA_CHECK(cudaMemcpy(got.data(), dc.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t e = 0; e < got.size(); ++e)
        ASSERT_NEAR(got[e], want[e], (double(s.k) * 6e-8 + 1e-7) * bound[e] + 1e-30) << "entry " << e;
    }
  }
}

// The tensor-core product C = A . B^T at each of its tiles (TF32, and fp16 operands on
// the fp16 tiles), against float64: each term's operands lose at most 2^-10 of themselves
// to TF32's truncation (2^-11 to fp16's rounding), so an entry stays within 2^-8 of the
// sum of its terms' magnitudes. Shapes no tile divides, K not a multiple of the 128-byte
// slice, long and skinny ones; the output is poisoned with NaN first.
TEST(GpuGemm, TensorTilesEqualTheProductOnAnyShape) {
  SIMKIT_REQUIRE_GPU();
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  test::Random random;
  SCOPED_TRACE(random.seed());
  struct Shape {
    std::size_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 4},       {7, 13, 36},     {130, 300, 68},   {1, 1000, 64}, {1000, 1, 64},
                          {257, 513, 300}, {300, 200, 1028}, {129, 257, 264}, {5, 3, 0}};
  for (const Shape& s : shapes) {
    const std::vector<float> a = random.floats(s.m * s.k), b = random.floats(s.n * s.k);
    std::vector<double> want(s.m * s.n, 0.0), bound(s.m * s.n, 0.0);
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t j = 0; j < s.n; ++j)
        for (std::size_t l = 0; l < s.k; ++l) {
          const double term = double(a[i * s.k + l]) * b[j * s.k + l];
          want[i * s.n + j] += term;
          bound[i * s.n + j] += std::fabs(term);
        }
    const auto da = cuda::to_device(a.data(), a.size()), db = cuda::to_device(b.data(), b.size());
    cuda::DeviceBuffer<std::uint16_t> ha(std::max<std::size_t>(a.size(), 8)), hb(std::max<std::size_t>(b.size(), 8));
    gemm::to_fp16(da.get(), a.size(), 1.0f, ha.get());
    gemm::to_fp16(db.get(), b.size(), 1.0f, hb.get());
    cuda::DeviceBuffer<float> dc(s.m * s.n);
    for (const gemm::TensorTile& tile : gemm::tensor_tiles()) {
      if (tile.fp16 && s.k % 8 != 0) continue;  // fp16 rows of whole 16-byte pieces
      SCOPED_TRACE(testing::Message() << tile.name() << " on " << s.m << " x " << s.n << " x " << s.k);
      SIMKIT_CUDA_CHECK(cudaMemset(dc.get(), 0xFF, s.m * s.n * sizeof(float)));
      if (tile.fp16)
        gemm::multiply_fp16(tile, s.m, s.n, s.k, ha.get(), hb.get(), dc.get());
      else
        gemm::multiply_tf32(tile, s.m, s.n, s.k, da.get(), db.get(), dc.get());
      SIMKIT_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> got(s.m * s.n);
      SIMKIT_CUDA_CHECK(cudaMemcpy(got.data(), dc.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t e = 0; e < got.size(); ++e)
        ASSERT_NEAR(got[e], want[e], 0x1p-8 * bound[e] + 1e-30) << "entry " << e;
    }
  }
  // K must be a multiple of 4 (16-byte rows; 8 for fp16), and each tile takes its type.
  cuda::DeviceBuffer<float> x(64);
  cuda::DeviceBuffer<std::uint16_t> h(64);
  const auto tile_of = [](bool fp16) {
    for (const gemm::TensorTile& tile : gemm::tensor_tiles())
      if (tile.fp16 == fp16) return tile;
    return gemm::TensorTile{};
  };
  EXPECT_THROW(gemm::multiply_tf32(tile_of(false), 2, 2, 6, x.get(), x.get(), x.get()), UsageError);
  EXPECT_THROW(gemm::multiply_fp16(tile_of(true), 2, 2, 12, h.get(), h.get(), x.get()), UsageError);
  EXPECT_THROW(gemm::multiply_tf32(tile_of(true), 2, 2, 8, x.get(), x.get(), x.get()), UsageError);
  EXPECT_THROW(gemm::multiply_fp16(tile_of(false), 2, 2, 8, h.get(), h.get(), x.get()), UsageError);
}

}  // namespace
}  // namespace simkit
