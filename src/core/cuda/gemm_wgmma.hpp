// Internal: the TF32 tensor-core product (core/cuda/gemm_wgmma.cu, built for sm_90a when
// SIMKIT_HAVE_WGMMA), behind simkit::gemm's multiply_tf32, top_k_tf32 and threshold_tf32.
// Pointers on the device; k and spec.rotate_a multiples of 4, rows 16-byte aligned.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

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

// Every score into c (row stride ld), 128 x 256 tiles. With spec.rotate_a = P on rows
// [M|A] of pitch P, A's rows read as [A|M]: one product gives A_a.M_b^T + M_a.A_b^T (Lin).
void scores_tf32(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                 const float* b, float* c, std::size_t ld, cudaStream_t stream);

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
