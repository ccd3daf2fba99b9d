// dense_top_k on the CPU: OpenBLAS products of row blocks in the pairwise engine's threads,
// turned into the metric's score in place; the GPU path is in cuda/dense_topk.cu.
#include "engine/dense_topk.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/blas_kernel.hpp"
#include "simkit/error.hpp"

namespace simkit {

Metric parse_metric(std::string_view name) {
  if (name == "dot") return Metric::dot;
  if (name == "cosine") return Metric::cosine;
  if (name == "l2") return Metric::l2;
  throw UsageError(fmt::format("metric {}: expected dot, cosine or l2", quote(name)));
}

const char* metric_name(Metric metric) noexcept {
  switch (metric) {
    case Metric::dot: return "dot";
    case Metric::cosine: return "cosine";
    case Metric::l2: return "l2";
  }
  return "?";
}

std::vector<float> detail::row_factors(const float* rows, std::size_t count, std::size_t dim, Metric metric) {
  if (metric == Metric::dot) return {};
  std::vector<float> out(count);
  for (std::size_t r = 0; r < count; ++r) {
    double sum = 0;
    for (std::size_t d = 0; d < dim; ++d) sum += static_cast<double>(rows[r * dim + d]) * rows[r * dim + d];
    out[r] = metric == Metric::l2 ? static_cast<float>(sum) : sum > 0 ? static_cast<float>(1 / std::sqrt(sum)) : 0.0f;
  }
  return out;
}

TopKLists dense_top_k(const float* a, std::size_t rows_a, const float* b, std::size_t rows_b, std::size_t dim,
                      const DenseTopKOptions& options) {
  if (options.k == 0) throw UsageError("k must be at least 1");
  if (dim == 0) throw UsageError("the rows have no columns");
  PairwiseJob job;
  job.rows_a = rows_a;
  job.rows_b = rows_b;
  job.k = options.k;
  job.memory_budget = options.memory_budget;
  PairwiseResult result;
  if (options.device >= 0) {
    result = detail::dense_top_k_gpu(a, rows_a, b, rows_b, dim, options, job);
  } else {
    use_single_threaded_blas();  // parallelism comes from the engine's threads
    const std::vector<float> fa = detail::row_factors(a, rows_a, dim, options.metric);
    const std::vector<float> fb = detail::row_factors(b, rows_b, dim, options.metric);
    const auto n = static_cast<int>(dim);
    result = pairwise_cpu(job, [&](RowRange ra, RowRange rb, float* out, std::size_t ld) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(ra.size()), static_cast<int>(rb.size()), n,
                  1.0f, a + ra.begin * dim, n, b + rb.begin * dim, n, 0.0f, out, static_cast<int>(ld));
      if (options.metric == Metric::dot) return;
      for (std::size_t i = 0; i < ra.size(); ++i) {
        float* line = out + i * ld;
        const float x = fa[ra.begin + i];
        const float* y = fb.data() + rb.begin;
        if (options.metric == Metric::cosine) {
          for (std::size_t j = 0; j < rb.size(); ++j) line[j] *= x * y[j];
        } else {  // larger is better: minus the distance
          for (std::size_t j = 0; j < rb.size(); ++j) line[j] = -std::max(0.0f, x + y[j] - 2 * line[j]);
        }
      }
    });
  }
  TopKLists lists = std::move(result.topk);
  if (options.metric == Metric::l2)
    for (float& s : lists.scores) s = s == kEmptyScore ? std::numeric_limits<float>::infinity() : -s;
  return lists;
}

}  // namespace simkit
