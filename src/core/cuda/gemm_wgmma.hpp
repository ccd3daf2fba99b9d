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

}  // namespace simkit::gemm::detail
