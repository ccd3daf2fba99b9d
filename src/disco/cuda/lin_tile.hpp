// Internal, CUDA only: the last step of every Lin score tile, shared by the dense and
// sparse scorers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace simkit::disco::detail {

// tile[i][j] /= sums_a[i] + sums_b[j] (rows x cols, row stride ld; 0 where the sum is 0).
void divide_by_sums(float* tile, std::size_t ld, std::size_t rows, std::size_t cols, const float* sums_a,
                    const float* sums_b, cudaStream_t stream);

}  // namespace simkit::disco::detail
