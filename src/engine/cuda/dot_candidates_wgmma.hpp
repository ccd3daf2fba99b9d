// The Hopper (sm_90a, wgmma) variant of the fused kernel of dot_candidates.hpp. Built
// only when the CUDA architectures include 90 (SIMKIT_HAVE_WGMMA); dot_candidates()
// uses it on a compute-capability 9.0 device and the mma.sync kernel elsewhere.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "engine/cuda/dot_candidates.hpp"

namespace simkit::cuda::detail {

// Whether this device runs the wgmma kernel and rows of `stride` elements fit it.
bool wgmma_available(std::size_t stride);

void launch_wgmma(HalfType type, const void* a, std::size_t rows_a, const void* b, std::size_t rows_b,
                  std::size_t b_first, std::size_t stride, std::size_t row0, TopKState state, const Filter& filter,
                  const gpu::CandidateLists& lists, cudaStream_t stream);

}  // namespace simkit::cuda::detail
