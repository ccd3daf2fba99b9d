// The tiled product kernel (include/simkit/gemm.hpp), templated on its register tile,
// shared-memory depth and epilogue. 256 threads, 16 x 16; thread (tx, ty) owns C rows
// row0 + ty + 16 i (i < TM) and columns col0 + tx + 16 j (j < TN): strided so that the
// shared-memory reads are broadcasts (A) or consecutive (B), and the epilogue's stores
// coalesce. The next BK-slice is fetched into registers while the current one is
// multiplied, then stored to the other shared buffer: one barrier a slice.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "engine/cuda/gemm_epilogue.cuh"

namespace simkit::gemm::detail {

constexpr int kThreads = 256;

// A's slice is stored transposed with rows of 16 TM + 1 floats (the pad keeps the
// transposing stores off a single bank).
template <int TM, int TN, int BK>
constexpr std::size_t shared_bytes() {
  return 2 * std::size_t(BK) * (16 * TM + 1 + 16 * TN) * sizeof(float);
}

template <int TM, int TN, int BK, typename Epilogue>
__global__ void __launch_bounds__(kThreads) tiled_kernel(std::size_t m, std::size_t n, std::size_t k, const float* a,
                                                         const float* b, Epilogue epilogue) {
  constexpr int BM = 16 * TM, BN = 16 * TN, AS = BM + 1;
  constexpr int A_PER = (BM * BK + kThreads - 1) / kThreads, B_PER = (BK * BN + kThreads - 1) / kThreads;
  extern __shared__ float shared[];
  float* as = shared;                 // [2][BK][AS]: A's slice, transposed
  float* bs = shared + 2 * BK * AS;   // [2][BK][BN]
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const std::size_t row0 = std::size_t(blockIdx.y) * BM, col0 = std::size_t(blockIdx.x) * BN;

  float fa[A_PER], fb[B_PER];  // the next slice, on its way to shared memory
  const auto fetch = [&](std::size_t k0) {
#pragma unroll
    for (int p = 0; p < A_PER; ++p) {
      const int idx = t + p * kThreads, r = idx / BK, kk = idx % BK;  // consecutive threads: along a row of A
      const std::size_t gr = row0 + r, gk = k0 + kk;
      fa[p] = idx < BM * BK && gr < m && gk < k ? a[gr * k + gk] : 0.0f;
    }
#pragma unroll
    for (int p = 0; p < B_PER; ++p) {
      const int idx = t + p * kThreads, kk = idx / BN, c = idx % BN;  // along a row of B
      const std::size_t gk = k0 + kk, gc = col0 + c;
      fb[p] = idx < BK * BN && gk < k && gc < n ? b[gk * n + gc] : 0.0f;
    }
  };
  const auto store = [&](int stage) {
#pragma unroll
    for (int p = 0; p < A_PER; ++p) {
      const int idx = t + p * kThreads;
      if (idx < BM * BK) as[(stage * BK + idx % BK) * AS + idx / BK] = fa[p];
    }
#pragma unroll
    for (int p = 0; p < B_PER; ++p) {
      const int idx = t + p * kThreads;
      if (idx < BK * BN) bs[(stage * BK + idx / BN) * BN + idx % BN] = fb[p];
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  fetch(0);
  store(0);
  __syncthreads();
  int stage = 0;
  for (std::size_t k0 = 0; k0 < k; k0 += BK) {
    const bool more = k0 + BK < k;
    if (more) fetch(k0 + BK);
    const float* sa = as + stage * BK * AS;
    const float* sb = bs + stage * BK * BN;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ra[TM], rb[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) ra[i] = sa[kk * AS + ty + 16 * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) rb[j] = sb[kk * BN + tx + 16 * j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    if (more) store(stage ^ 1);
    __syncthreads();
    stage ^= 1;
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const std::size_t row = row0 + ty + 16 * i;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const std::size_t col = col0 + tx + 16 * j;
      if (col < n) epilogue(row, col, acc[i][j]);
    }
  }
}

}  // namespace simkit::gemm::detail
