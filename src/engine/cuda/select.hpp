// Device-side selection for the pairwise engine: per-row top-k merged into a running
// state, threshold hits, and the tile transpose used by symmetric jobs.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/block_mask.hpp"
#include "core/cuda/memory.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::cuda {

// Largest k the GPU selection supports.
inline constexpr std::size_t kMaxGpuK = 1024;

// Slots per row the kernels keep for a request of k (a power of two >= k, >= 8).
int state_width(std::size_t k);

// The running best entries of `rows` rows, `width` slots each, best first.
struct TopKState {
  float* scores = nullptr;
  std::uint32_t* indices = nullptr;
  std::size_t rows = 0;
  int width = 0;
};

// Sets every slot to (kEmptyScore, kNoIndex).
void fill_empty(TopKState state, cudaStream_t stream);

// Scratch for partial results of long rows, reused across calls; grows as needed.
struct SelectScratch {
  DeviceBuffer<float> scores;
  DeviceBuffer<std::uint32_t> indices;
};

// Scratch entries select_rows needs for a rows x cols tile at `width`.
std::size_t select_scratch_entries(std::size_t rows, std::size_t cols, int width);

// Merges the masked entries of a dense tile (rows x cols, row stride ld, device memory)
// into rows [row0, row0 + rows) of `state`; column c carries index col0 + c.
void select_rows(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                 std::size_t row0, std::size_t col0, detail::BlockMask mask, TopKState state,
                 SelectScratch& scratch, cudaStream_t stream);

// Merges lists of candidates into rows [row0, row0 + rows) of `state`: row r's entries
// are scores/indices[r * per_row, r * per_row + min(counts[r], per_row)).
void select_lists(const float* scores, const std::uint32_t* indices, const std::uint32_t* counts,
                  std::size_t per_row, std::size_t rows, std::size_t row0, TopKState state,
                  cudaStream_t stream);

// out (cols x rows, stride ld_out) = transpose of in (rows x cols, stride ld_in).
void transpose(const float* in, std::size_t rows, std::size_t cols, std::size_t ld_in,
               float* out, std::size_t ld_out, cudaStream_t stream);

// Appends every masked tile entry with score >= threshold to `out` (capacity entries)
// and counts them all in *count, also those that did not fit.
void collect_hits(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                  std::size_t row0, std::size_t col0, detail::BlockMask mask, float threshold,
                  ScoredPair* out, unsigned long long* count, std::size_t capacity,
                  cudaStream_t stream);

}  // namespace simkit::cuda
