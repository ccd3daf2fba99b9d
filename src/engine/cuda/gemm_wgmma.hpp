// Internal: the TF32 tensor-core product (engine/cuda/gemm_wgmma.cu, built for sm_90a when
// SIMKIT_HAVE_WGMMA), behind simkit::gemm's multiply_tf32, top_k_tf32 and threshold_tf32.
// Pointers on the device; k and spec.rotate_a multiples of 4, rows 16-byte aligned.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/cuda/gemm_epilogue.cuh"
#include "simkit/gemm.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::gemm::detail {

const std::vector<TensorTile>& tensor_tiles_impl();
void multiply_tf32_impl(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a,
                        const float* b, float* c, cudaStream_t stream);

// The plain product (128 x 128 tiles) with the tensor cores' sums added to fp32
// registers every 128 elements of K (the 3xTF32 product's engine).
void multiply_tf32_promoted(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                            cudaStream_t stream);

// C = A . B^T with fp16 operands (IEEE half bits), fp32 sums: the fp16 tile of
// tensor_tiles_impl(); k a multiple of 8 (TMA reads whole 16-byte pieces).
void multiply_fp16_impl(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const std::uint16_t* a,
                        const std::uint16_t* b, float* c, cudaStream_t stream);

// The band's lists of n rows (k elements each: floats, or fp16 when `fp16`, read as both
// operands; spec.rotate_a as in scores) on the TMA kernel; top <= 16.
void self_lists(const ScoreSpec& spec, bool fp16, std::size_t n, std::size_t k, const void* rows, int top,
                const SelfBand& band, cudaStream_t stream);

// Every entry past `threshold` appended to hits (capacity), *count counting them all.
void threshold_tf32_impl(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                         const float* b, float threshold, ScoredPair* hits, unsigned long long* count,
                         std::size_t capacity, cudaStream_t stream);

// The top-k kernel runs top_k_groups(m, n, k, top) blocks a row tile, each over its share of the
// column tiles; it writes each row's best `top` keys (score, or minus a distance) of each
// share: row i's lists at lists_*[i * groups * top, + groups * top), best first in each
// (groups: what top_k_groups said, asked once: it depends on the free memory).
unsigned top_k_groups(std::size_t m, std::size_t n, std::size_t k, int top);
void top_k_lists_tf32(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                      const float* b, int top, unsigned groups, float* lists_key, std::uint32_t* lists_column,
                      cudaStream_t stream);

}  // namespace simkit::gemm::detail
