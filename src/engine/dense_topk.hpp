// Internal: the pieces of dense_top_k (simkit/dense_topk.hpp) that both back ends share.
#pragma once

#include <cstddef>
#include <vector>

#include "simkit/dense_topk.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::detail {

// Each row's factor in the metric's score: 1/|row| (0 for a zero row) for cosine, |row|^2
// for l2, nothing for dot. Summed in double.
std::vector<float> row_factors(const float* rows, std::size_t count, std::size_t dim, Metric metric);

// The engine's job on the GPU (dense_topk.cu; a CPU-only build throws UsageError).
PairwiseResult dense_top_k_gpu(const float* a, std::size_t rows_a, const float* b, std::size_t rows_b,
                               std::size_t dim, const DenseTopKOptions& options, const PairwiseJob& job);

}  // namespace simkit::detail
