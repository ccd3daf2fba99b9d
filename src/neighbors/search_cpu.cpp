// CPU search: cosine scores by OpenBLAS (sgemv for one query, sgemm for a batch) on
// blocks of the model, in parallel through the pairwise engine, scaled by 1/|row|.
#include <cblas.h>

#include <algorithm>

#include "core/blas_kernel.hpp"
#include "neighbors/search_backends.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::neighbors::detail {

CpuIndex make_cpu_index(const Model& model) {
  use_single_threaded_blas();  // parallelism comes from the engine's threads
  CpuIndex index;
  index.model = &model;
  index.inv_norms.resize(model.rows);
  for (std::size_t r = 0; r < model.rows; ++r)
    index.inv_norms[r] = model.norms[r] > 0 ? 1.0f / model.norms[r] : 0.0f;
  return index;
}

TopKLists search_cpu(const CpuIndex& index, const float* directions, std::size_t queries,
                     std::size_t k, std::size_t memory_budget) {
  const Model& model = *index.model;
  const auto dim = static_cast<int>(model.dim);
  PairwiseJob job;
  job.rows_a = queries;
  job.rows_b = model.rows;
  job.k = k;
  job.memory_budget = memory_budget;
  const BlockScoreFn score = [&](RowRange a, RowRange b, float* out, std::size_t ld) {
    const float* q = directions + a.begin * model.dim;
    const float* e = model.vectors + b.begin * model.dim;
    const auto rows_b = static_cast<int>(b.size());
    if (a.size() == 1) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, rows_b, dim, 1.0f, e, dim, q, 1, 0.0f, out, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(a.size()), rows_b, dim,
                  1.0f, q, dim, e, dim, 0.0f, out, static_cast<int>(ld));
    }
    const float* inv = index.inv_norms.data() + b.begin;
    for (std::size_t i = 0; i < a.size(); ++i) {
      float* line = out + i * ld;
      for (std::size_t j = 0; j < b.size(); ++j) line[j] *= inv[j];
    }
  };
  return pairwise_cpu(job, score).topk;
}

}  // namespace simkit::neighbors::detail
