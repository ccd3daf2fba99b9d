// Internal: the dense all-pairs job on a GPU (src/disco/cuda/all_pairs.cu).
#pragma once

#include "disco/dense.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::disco::detail {

// The job on CUDA device options.device: [A|M] rows of a block against [M|A] rows by
// cuBLAS (fp32, tf32 or fp16), each score divided by s_i + s_j, or by simkit's fused
// self-join (tf32 or fp16, Hopper). Throws Failure without CUDA.
TopKLists all_pairs_gpu(const Model& model, const DenseRows& rows, const PairwiseJob& job,
                        const AllPairsOptions& options, double* device_ms);

// The job in the sparse form on CUDA device options.device: every feature, scores summed
// from the words' inverted lists (src/disco/cuda/sparse_pairs.cu). Throws Failure
// without CUDA.
TopKLists all_pairs_sparse_gpu(const Model& model, const PairwiseJob& job, const AllPairsOptions& options,
                               double* device_ms);

}  // namespace simkit::disco::detail
