// Device pieces both fused kernels share (dot_candidates.cu: mma.sync;
// dot_candidates_wgmma.cu: wgmma): asynchronous copies, the bar of a row of A, where a
// block's stream of B slices stands, and the offer of a candidate.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "engine/cuda/rank_order.cuh"

namespace simkit::cuda::fused {

// Shared memory one block may use on sm_90 (static and dynamic together).
inline constexpr std::size_t kMaxSharedBytes = 227 * 1024;

// The grid of a fused launch: x over the tiles of A, y over the groups that share a wave
// of `wave` blocks; a block streams every gridDim.y-th tile of B, and blocks with the same
// y read the same tiles of B at about the same time, once from memory.
inline dim3 stream_grid(std::size_t rows_a, std::size_t tile_a, std::size_t rows_b, std::size_t tile_b,
                        std::size_t wave) {
  const std::size_t tiles_a = (rows_a + tile_a - 1) / tile_a, tiles_b = (rows_b + tile_b - 1) / tile_b;
  const std::size_t groups = std::clamp<std::size_t>(wave / tiles_a, 1, std::min<std::size_t>(tiles_b, 65535));
  return dim3(static_cast<unsigned>(tiles_a), static_cast<unsigned>(groups));
}

// 16 bytes from global to shared memory (a 32-bit shared address); bytes = 0 writes
// zeros (rows or K past the end).
__device__ __forceinline__ void copy16(unsigned dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

struct Bar {
  float score;
  std::uint32_t index;
};

// The bar of A row ra: slot bar_slot of its running top-k (state row row0 + ra), or
// +infinity past the last row (nothing beats it). With a scale (filtering for exact
// rescoring, see Filter), the bar of its unit row less the slack, index order ignored:
// every entry whose true score reaches the bar passes.
__device__ __forceinline__ Bar row_bar(const float* state_s, const std::uint32_t* state_i, int width, int bar_slot,
                                       std::size_t row0, std::size_t ra, std::size_t rows_a, const float* scale,
                                       float slack) {
  if (ra >= rows_a) return {__int_as_float(0x7f800000), 0u};
  const std::size_t slot = (row0 + ra) * width + bar_slot;
  if (scale == nullptr) return {state_s[slot], state_i[slot]};
  return {scale[ra] > 0 ? state_s[slot] / scale[ra] - slack : -__int_as_float(0x7f800000), 0xffffffffu};
}

// Where a block's stream of (tile, slice) steps stands: the K slice, the ring stage it
// goes to, and the first row of B of its tile (tiles are tile_step rows apart).
template <int Stages>
struct SliceCursor {
  int slice = 0;
  int stage = 0;
  std::size_t row0;
  __device__ explicit SliceCursor(std::size_t first_row) : row0(first_row) {}
  __device__ __forceinline__ void advance(int slices, std::size_t tile_step) {
    stage = stage + 1 == Stages ? 0 : stage + 1;
    if (++slice == slices) {
      slice = 0;
      row0 += tile_step;
    }
  }
};

// Appends (score, index) to A row ra's candidate list; the count goes on past the capacity
// so that the engine sees the overflow.
__device__ __forceinline__ void offer(float score, std::uint32_t index, std::size_t ra, std::uint32_t* counts,
                                      float* cand_s, std::uint32_t* cand_i, std::uint32_t capacity) {
  const std::uint32_t at = atomicAdd(counts + ra, 1u);
  if (at < capacity) {
    cand_s[ra * capacity + at] = score;
    cand_i[ra * capacity + at] = index;
  }
}

}  // namespace simkit::cuda::fused
