// What the tiled products do with a finished entry p = A_i . B_j (include/simkit/gemm.hpp):
// a score turns p into the job's score (dot, cosine, Lin, squared distance), a sink
// stores it, or keeps the entries past a threshold. Both kernels (tiled_gemm.cuh on the
// CUDA cores, gemm_wgmma.cu on tensor cores) take an elementwise sink; the tensor-core
// kernel also keeps each row's top k in its epilogue (gemm_wgmma.cu).
//
// Rankings use a key where larger is better: the score itself, or minus a distance.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "simkit/error.hpp"
#include "simkit/gemm.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::gemm::detail {

// Each score combines p with one factor of row i of A (ra) and one of row j of B (rb),
// read from row_a and row_b (unused by the dot product).
struct DotScore {
  static constexpr bool kSmallerFirst = false, kFactors = false;
  const float* row_a = nullptr;
  const float* row_b = nullptr;
  __device__ float combine(float, float, float p) const { return p; }
};

// p scaled by the rows' inverse norms.
struct CosineScore {
  static constexpr bool kSmallerFirst = false, kFactors = true;
  const float* row_a;
  const float* row_b;
  __device__ float combine(float ra, float rb, float p) const { return p * ra * rb; }
};

// Lin's similarity (DISCO, formula 3.8): the product is the numerator, divided by
// s_i + s_j (0 where that is 0).
struct LinScore {
  static constexpr bool kSmallerFirst = false, kFactors = true;
  const float* row_a;
  const float* row_b;
  __device__ float combine(float ra, float rb, float p) const {
    const float d = ra + rb;
    return d > 0 ? p / d : 0.0f;
  }
};

// |a_i - b_j|^2 = |a_i|^2 + |b_j|^2 - 2 p, never below 0 (rounding); smaller is nearer.
struct SquaredDistanceScore {
  static constexpr bool kSmallerFirst = true, kFactors = true;
  const float* row_a;
  const float* row_b;
  __device__ float combine(float ra, float rb, float p) const { return fmaxf(ra + rb - 2.0f * p, 0.0f); }
};

template <typename Score>
__device__ __forceinline__ float factor_a(const Score& score, std::size_t i) {
  if constexpr (Score::kFactors) return score.row_a[i];
  return 0.0f;
}
template <typename Score>
__device__ __forceinline__ float factor_b(const Score& score, std::size_t j) {
  if constexpr (Score::kFactors) return score.row_b[j];
  return 0.0f;
}
template <typename Score>
__device__ __forceinline__ float score_at(const Score& score, std::size_t i, std::size_t j, float p) {
  return score.combine(factor_a(score, i), factor_b(score, j), p);
}

template <typename Score>
__host__ __device__ inline float key_of(float score) {
  return Score::kSmallerFirst ? -score : score;
}

// Each entry's score into C (row stride ld).
template <typename Score>
struct StoreSink {
  static constexpr bool kTopK = false, kSelf = false;
  Score score;
  float* c;
  std::size_t ld;
  __device__ void operator()(std::size_t i, std::size_t j, float p) const { c[i * ld + j] = score_at(score, i, j, p); }
};

// The plain product.
using Store = StoreSink<DotScore>;

// Every entry whose key reaches `key` (score >= threshold; distance <= threshold),
// appended in no order; *count counts them all, also those past the capacity.
template <typename Score>
struct ThresholdSink {
  static constexpr bool kTopK = false, kSelf = false;
  Score score;
  float key;
  ScoredPair* hits;
  unsigned long long* count;
  std::size_t capacity;
  __device__ void operator()(std::size_t i, std::size_t j, float p) const {
    const float s = score_at(score, i, j, p);
    if (!(key_of<Score>(s) >= key)) return;
    const unsigned long long at = atomicAdd(count, 1ull);
    if (at < capacity) hits[at] = ScoredPair{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), s};
  }
};

// Each row's `top` best keys (ties by lower column), kept by the tensor-core kernel in
// shared memory while a block streams its share of the column tiles, then written as
// that share's list: row i's lists are lists_*[i * per_row + share * top, + top).
template <typename Score>
struct TopKSink {
  static constexpr bool kTopK = true, kSelf = false;
  Score score;
  int top;
  float* lists_key;
  std::uint32_t* lists_column;
  std::size_t per_row;
};

// One band of the fused self-join's launches (A is B; only pairs i < j, each scored
// once): row tiles [tile_lo, tile_hi) of kSelfTileM rows against the column tiles of
// kSelfTileN from col_tile_lo (the one holding the band's first row) on. Each tile writes
// its rows' and its columns' best `top` keys as lists (best first, padded with (-inf,
// 0xffffffff)): row i's of column tile J at row_*[(i - kSelfTileM tile_lo) * row_per +
// (J - col_tile_lo) * top], column j's of row tile I at col_*[(j - kSelfTileN
// col_tile_lo) * col_per + (I - tile_lo) * top]; pairs i >= j and tiles holding none come
// out empty. The engine's selection merges them into each row's top.
inline constexpr std::size_t kSelfTileM = 128, kSelfTileN = 256;
struct SelfBand {
  std::size_t tile_lo = 0, tile_hi = 0, col_tile_lo = 0;
  float* row_keys = nullptr;
  std::uint32_t* row_columns = nullptr;
  std::size_t row_per = 0;
  float* col_keys = nullptr;
  std::uint32_t* col_rows = nullptr;
  std::size_t col_per = 0;

  // The rows and columns the band's launch covers.
  __host__ __device__ std::size_t rows() const { return (tile_hi - tile_lo) * kSelfTileM; }
  __host__ __device__ std::size_t columns(std::size_t n) const { return n - col_tile_lo * kSelfTileN; }
};
template <typename Score>
struct SelfTopKSink {
  static constexpr bool kTopK = false, kSelf = true;
  Score score;
  int top;
  std::size_t n;
  SelfBand band;
};

// Calls body with the score functor `spec` names.
template <typename Body>
void with_score(const ScoreSpec& spec, Body&& body) {
  switch (spec.kind) {
    case Score::Dot: return body(DotScore{});
    case Score::Cosine: return body(CosineScore{spec.row_a, spec.row_b});
    case Score::Lin: return body(LinScore{spec.row_a, spec.row_b});
    case Score::SquaredDistance: return body(SquaredDistanceScore{spec.row_a, spec.row_b});
  }
  throw UsageError("unknown score");
}

}  // namespace simkit::gemm::detail
