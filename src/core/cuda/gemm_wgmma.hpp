// Internal: the TF32 tensor-core product (core/cuda/gemm_wgmma.cu, built for sm_90a when
// SIMKIT_HAVE_WGMMA), behind simkit::gemm::multiply_tf32.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "simkit/gemm.hpp"

namespace simkit::gemm::detail {

const std::vector<TensorTile>& tensor_tiles_impl();
void multiply_tf32_impl(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a,
                        const float* b, float* c, cudaStream_t stream);

// Lin scores in one pass (128 x 256 tiles): c[i][j] (row stride ld) = (a'_i . b_j) /
// (sums_a[i] + sums_b[j]), where a'_i is row i of a (k floats) read from column a_rotate
// on, wrapping: with rows [M|A] of pitch P, a_rotate = P reads them as [A|M], so one
// product gives A_a.M_b^T + M_a.A_b^T. k and a_rotate multiples of 4, rows 16-byte
// aligned; sm_90 only (see tensor_tiles()).
void lin_scores_tf32(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t a_rotate,
                     const float* b, const float* sums_a, const float* sums_b, float* c, std::size_t ld,
                     cudaStream_t stream);

}  // namespace simkit::gemm::detail
