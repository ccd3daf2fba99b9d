// Top k of dense float32 rows: for each row of A, the k rows of B of highest dot product
// or cosine similarity, or of smallest squared Euclidean distance, through the pairwise
// engine on the CPU (OpenBLAS products) or a GPU (cuBLAS fp32 products).
#pragma once

#include <cstddef>
#include <string_view>

#include "simkit/topk.hpp"

namespace simkit {

enum class Metric { dot, cosine, l2 };
// "dot", "cosine" or "l2"; throws UsageError naming the choices otherwise.
Metric parse_metric(std::string_view name);
const char* metric_name(Metric metric) noexcept;

struct DenseTopKOptions {
  std::size_t k = 10;
  Metric metric = Metric::cosine;
  int device = -1;                // CUDA device; -1: the CPU
  std::size_t memory_budget = 0;  // bytes for the engine's blocks; 0: automatic
};

// a: rows_a x dim and b: rows_b x dim, row-major. Each row of the result lists up to k
// rows of B best first, ties by lower index; slots past rows_b stay empty (kNoIndex).
//   dot     a.b
//   cosine  a.b / (|a| |b|), 0 where either row is zero
//   l2      |a - b|^2 (computed as |a|^2 + |b|^2 - 2 a.b, at least 0), smallest first;
//           the scores are these distances, empty slots +inf
// CPU and GPU agree to fp32 rounding. Throws UsageError for k = 0 or dim = 0, and
// (GPU) for k above 1024.
TopKLists dense_top_k(const float* a, std::size_t rows_a, const float* b, std::size_t rows_b, std::size_t dim,
                      const DenseTopKOptions& options);

}  // namespace simkit
