// The epilogue of the fused self-join (SelfTopKSink, gemm_epilogue.cuh) on the tensor-core
// kernel (gemm_wgmma.cu): a finished BM x BN tile above the diagonal feeds its rows' lists
// and its columns' (the same scores seen from the rows below), so each pair is multiplied
// once. The accumulators go to shared memory as keys (the ring is idle by then: a block
// takes one tile), then 256 threads select:
//
// - each column's best `top` of its BM rows (a thread a column), then
// - each row's best `top` of its BN columns (two threads a row, half the columns each).
//
// A line's selection: the maxima of 16 groups of its entries, sorted; their top-th best T
// has at least `top` entries at or above it, so only entries past T, and the first `top`
// (lowest index) equal to T, can be in the line's top. Those survivors (typically a few
// more than `top`) gather in shared memory, and the best `top` of them are picked in
// order. A line with more survivors than kSelfCap (many ties, or few valid entries beside
// the diagonal) is selected exactly by insertion instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/cuda/gemm_epilogue.cuh"
#include "engine/cuda/rank_order.cuh"

namespace simkit::gemm::detail {

inline constexpr int kSelfMaxTop = 16;   // the selection's 16 groups bound the top
inline constexpr int kSelfPitch = 257;   // floats a tile row in shared memory: odd, so rows and columns both read conflict-free
inline constexpr int kSelfCap = 32;      // survivors a line gathers before its exact path
inline constexpr int kSelfThreads = 256;

// Shared memory of the epilogue: the keys, the survivors ([slot][line], keys then indices),
// the column factors, the rows' survivor counts and their group maxima.
template <int BM, int BN>
struct SelfLayout {
  static_assert(BN == kSelfThreads && 2 * BM == kSelfThreads, "a thread a column, two a row");
  static constexpr unsigned kKeys = 0;
  static constexpr unsigned kSurvivors = kKeys + BM * kSelfPitch * 4;
  static constexpr unsigned kFactors = kSurvivors + kSelfCap * BN * 8;
  static constexpr unsigned kCounts = kFactors + BN * 4;
  static constexpr unsigned kMaxima = kCounts + BM * 4;
  static constexpr unsigned kBytes = kMaxima + 2 * BM * 8 * 4;
};

// m sorted best (largest) first: a bitonic network, unrolled (indices known when compiled).
__device__ __forceinline__ void sort16(float (&m)[16]) {
#pragma unroll
  for (int level = 1; level <= 4; ++level)
#pragma unroll
    for (int step = level - 1; step >= 0; --step)
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        const int size = 1 << level, j = i ^ (1 << step);
        if (j > i) {
          const float a = m[i], b = m[j];
          const bool larger_first = (i & size) == 0;
          m[i] = larger_first ? fmaxf(a, b) : fminf(a, b);
          m[j] = larger_first ? fminf(a, b) : fmaxf(a, b);
        }
      }
}

// The bar of a line from its 16 group maxima: at least `top` of its entries reach it.
__device__ __forceinline__ float line_bar(float (&m)[16], int top) {
  sort16(m);
  float bar = m[0];
#pragma unroll
  for (int i = 1; i < 16; ++i)
    if (i == top - 1) bar = m[i];
  return bar;
}

// Whether an entry survives a line's bar: past it, or equal to it among the first `top`
// ties this thread meets (entries come in index order). Empty entries (no key) never do.
__device__ __forceinline__ bool survives(float key, float bar, int top, int& ties) {
  if (key > bar) return true;
  return key == bar && key != cuda::empty_key() && ties++ < top;
}

// Line `line`'s survivors (slot s at keys[s * lines + line]) into out: its best `top`,
// best first, then empty slots.
__device__ __forceinline__ void write_best(const float* keys, const std::uint32_t* indices, int count, int lines,
                                           int line, int top, float* out_keys, std::uint32_t* out_indices) {
  float last_key = 0;
  std::uint32_t last_index = 0;
  bool taken = false;
  for (int s = 0; s < top; ++s) {
    float best_key = cuda::empty_key();
    std::uint32_t best_index = 0xffffffffu;
    for (int e = 0; e < count; ++e) {
      const float key = keys[e * lines + line];
      const std::uint32_t index = indices[e * lines + line];
      if (taken && !cuda::ranks_before(last_key, last_index, key, index)) continue;
      if (best_index == 0xffffffffu || cuda::ranks_before(key, index, best_key, best_index)) {
        best_key = key;
        best_index = index;
      }
    }
    out_keys[s] = best_key;
    out_indices[s] = best_index;
    if (best_index != 0xffffffffu) {
      last_key = best_key;
      last_index = best_index;
      taken = true;
    }
  }
}

// The exact path of a line: its best `top` of all `count` entries (entry e: key at
// keys[e * stride], index first + e) by insertion into slots 0..top-1 of its survivors.
__device__ __forceinline__ void insert_all(const float* entries, int stride, int count, std::uint32_t first, int top,
                                           float* keys, std::uint32_t* indices, int lines, int line) {
  for (int s = 0; s < top; ++s) {
    keys[s * lines + line] = cuda::empty_key();
    indices[s * lines + line] = 0xffffffffu;
  }
  for (int e = 0; e < count; ++e) {
    const float key = entries[e * stride];
    const std::uint32_t index = first + static_cast<std::uint32_t>(e);
    if (key != cuda::empty_key() &&
        cuda::ranks_before(key, index, keys[(top - 1) * lines + line], indices[(top - 1) * lines + line]))
      cuda::insert_sorted(keys + line, indices + line, top, key, index, lines);
  }
}

// The finished tile (row tile I at row0, column tile J at col0) into its lists. d holds
// this thread's accumulators as the wgmma layout has them: d[4 j + i] is row local0 + 8
// (i / 2), column 8 j + 2 (lane % 4) + i % 2 of the tile. smem: the block's shared memory
// (1024-aligned), free to overwrite: every MMA of the block is done.
template <int BM, int BN, typename Score>
__device__ __forceinline__ void self_finish(const float* d, const SelfTopKSink<Score>& sink, std::uint8_t* smem,
                                            int local0, std::size_t row0, std::size_t col0) {
  using L = SelfLayout<BM, BN>;
  float* keys = reinterpret_cast<float*>(smem + L::kKeys);
  float* survivor_keys = reinterpret_cast<float*>(smem + L::kSurvivors);
  std::uint32_t* survivor_indices = reinterpret_cast<std::uint32_t*>(smem + L::kSurvivors + kSelfCap * BN * 4);
  float* factors = reinterpret_cast<float*>(smem + L::kFactors);
  int* counts = reinterpret_cast<int*>(smem + L::kCounts);
  float* maxima = reinterpret_cast<float*>(smem + L::kMaxima);
  const int t = threadIdx.x, lane = t & 31, top = sink.top;
  const std::size_t n = sink.n, tile_i = row0 / BM, tile_j = col0 / BN;

  const float factor = col0 + t < n ? factor_b(sink.score, col0 + t) : 0.0f;
  float ra[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) ra[h] = row0 + local0 + 8 * h < n ? factor_a(sink.score, row0 + local0 + 8 * h) : 0.0f;
  // The operands' last readers (both warpgroups' MMAs) are done before anything goes over them.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  factors[t] = factor;
  if (t < BM) counts[t] = 0;
  __syncthreads();
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = local0 + 8 * (i >> 1), col = 8 * j + 2 * (lane & 3) + (i & 1);
      const std::size_t r = row0 + row, c = col0 + col;
      keys[row * kSelfPitch + col] =
          r < c && c < n ? key_of<Score>(sink.score.combine(ra[i >> 1], factors[col], d[4 * j + i])) : cuda::empty_key();
    }
  __syncthreads();

  // Columns: thread t takes column t, groups of 8 rows.
  {
    const float* line = keys + t;
    float m[16];
#pragma unroll
    for (int g = 0; g < 16; ++g) {
      float top_of_group = cuda::empty_key();
#pragma unroll
      for (int r = 0; r < BM / 16; ++r) top_of_group = fmaxf(top_of_group, line[(g * (BM / 16) + r) * kSelfPitch]);
      m[g] = top_of_group;
    }
    const float bar = line_bar(m, top);
    int count = 0, ties = 0;
    for (int r = 0; r < BM; ++r) {
      const float key = line[r * kSelfPitch];
      if (!survives(key, bar, top, ties)) continue;
      if (count < kSelfCap) {
        survivor_keys[count * BN + t] = key;
        survivor_indices[count * BN + t] = static_cast<std::uint32_t>(row0 + r);
      }
      ++count;
    }
    if (col0 + t < n) {
      const SelfBand& b = sink.band;
      const std::size_t at = (col0 + t - b.col_tile_lo * BN) * b.col_per + (tile_i - b.tile_lo) * top;
      if (count > kSelfCap)
        insert_all(line, kSelfPitch, BM, static_cast<std::uint32_t>(row0), top, survivor_keys, survivor_indices, BN, t);
      write_best(survivor_keys, survivor_indices, count > kSelfCap ? top : count, BN, t, top, b.col_keys + at,
                 b.col_rows + at);
    }
  }
  __syncthreads();

  // Rows: thread t takes half t / BM of row t % BM, groups of 16 columns; the row's 16
  // group maxima meet in shared memory, its survivors in one list.
  {
    const int row = t % BM, half = t / BM;
    const float* line = keys + row * kSelfPitch;
    constexpr int kHalf = BN / 2, kGroup = kHalf / 8;
#pragma unroll
    for (int g = 0; g < 8; ++g) {
      float top_of_group = cuda::empty_key();
#pragma unroll
      for (int c = 0; c < kGroup; ++c) top_of_group = fmaxf(top_of_group, line[half * kHalf + g * kGroup + c]);
      maxima[(half * 8 + g) * BM + row] = top_of_group;
    }
    __syncthreads();
    float m[16];
#pragma unroll
    for (int g = 0; g < 16; ++g) m[g] = maxima[g * BM + row];
    const float bar = line_bar(m, top);
    int ties = 0;
    for (int c = half * kHalf; c < (half + 1) * kHalf; ++c) {
      const float key = line[c];
      if (!survives(key, bar, top, ties)) continue;
      const int slot = atomicAdd(counts + row, 1);
      if (slot < kSelfCap) {
        survivor_keys[slot * BM + row] = key;
        survivor_indices[slot * BM + row] = static_cast<std::uint32_t>(col0 + c);
      }
    }
    __syncthreads();
    const std::size_t r = row0 + row;
    if (half == 0 && r < n) {
      const int count = counts[row];
      const SelfBand& b = sink.band;
      const std::size_t at = (r - b.tile_lo * BM) * b.row_per + (tile_j - b.col_tile_lo) * top;
      if (count > kSelfCap)
        insert_all(line, 1, BN, static_cast<std::uint32_t>(col0), top, survivor_keys, survivor_indices, BM, row);
      write_best(survivor_keys, survivor_indices, count > kSelfCap ? top : count, BM, row, top, b.row_keys + at,
                 b.row_columns + at);
    }
  }
}

}  // namespace simkit::gemm::detail
