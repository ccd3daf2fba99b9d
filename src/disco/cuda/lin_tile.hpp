// Internal, CUDA only: what the dense and sparse Lin scorers share: the last step of
// every score tile, and running a scorer through the engine.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "simkit/disco.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::disco::detail {

// tile[i][j] /= sums_a[i] + sums_b[j] (rows x cols, row stride ld; 0 where the sum is 0).
void divide_by_sums(float* tile, std::size_t ld, std::size_t rows, std::size_t cols, const float* sums_a,
                    const float* sums_b, cudaStream_t stream);

// Device memory a job may use on options.device: --memory-budget, or 80% of what is free.
// The scorer's resident data takes up to half, the engine's blocks and tiles the rest.
std::size_t job_budget(const AllPairsOptions& options);

// The job through the engine with half of `budget`; the engine's time to device_ms.
TopKLists run_engine(const PairwiseJob& job, gpu::BlockScorer& scorer, const AllPairsOptions& options,
                     std::size_t budget, double* device_ms);

}  // namespace simkit::disco::detail
