// CPU search: cosine scores by OpenBLAS (sgemv for one query, sgemm for a batch) on
// blocks of the model, in parallel through the pairwise engine, scaled by 1/|row|; the
// listed rows then scored again in one fixed order (see kExactMargin).
#include <cblas.h>

#include <algorithm>
#include <utility>

#include <tbb/parallel_for.h>

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
  job.k = k + kExactMargin;
  const TopKLists listed = pairwise_cpu(job, score).topk;
  // Every listed row scored again in one order (double sums), whatever the block shapes.
  std::vector<float> exact(listed.scores.size());
  tbb::parallel_for(std::size_t{0}, queries, [&](std::size_t r) {
    const float* q = directions + r * model.dim;
    for (std::size_t c = 0; c < listed.filled(r); ++c) {
      const std::uint32_t row = listed.indices[r * listed.k + c];
      const float* e = model.vectors + std::size_t{row} * model.dim;
      double sum = 0;
      for (std::size_t d = 0; d < model.dim; ++d) sum += static_cast<double>(q[d]) * e[d];
      exact[r * listed.k + c] = static_cast<float>(sum * index.inv_norms[row]);
    }
  });
  return in_final_order(listed, exact, k);
}

TopKLists in_final_order(const TopKLists& listed, const std::vector<float>& scores, std::size_t k) {
  TopKLists out(listed.rows, k);
  // A few dozen rows a task: each row's sort is short, and a batch is a few thousand rows.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, listed.rows, 64), [&](const auto& range) {
    std::vector<std::pair<float, std::uint32_t>> entries;
    for (std::size_t r = range.begin(); r < range.end(); ++r) {
      entries.clear();
      for (std::size_t c = 0; c < listed.filled(r); ++c)
        entries.emplace_back(scores[r * listed.k + c], listed.indices[r * listed.k + c]);
      std::sort(entries.begin(), entries.end(),
                [](const auto& a, const auto& b) { return ranks_before(a.first, a.second, b.first, b.second); });
      for (std::size_t c = 0; c < std::min(k, entries.size()); ++c) {
        out.scores[r * k + c] = entries[c].first;
        out.indices[r * k + c] = entries[c].second;
      }
    }
  });
  return out;
}

}  // namespace simkit::neighbors::detail
