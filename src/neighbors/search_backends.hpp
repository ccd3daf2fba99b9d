// The two search back ends behind Searcher: both return, for each direction, the k
// rows of highest cosine similarity (ties: lower row first), excluding nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "simkit/neighbors.hpp"
#include "simkit/topk.hpp"

namespace simkit::neighbors::detail {

// The engine's scores come from kernels whose rounding depends on the shapes they are
// given (BLAS's blocking, cuBLAS's choice of kernel, which block of a batch a row falls
// in), and the shapes depend on the rows an index holds: a shard of the model under mpirun
// or --device cuda:all. So both back ends ask the engine for kExactMargin more rows than
// wanted, score every listed row again in one fixed order, and keep the first k in that
// order (in_final_order): a row's score is then the same whatever the shards, and one
// process (or GPU) and several give the same output byte for byte.
inline constexpr std::size_t kExactMargin = 8;
// listed's entries (scores: their exact scores, in listed's layout) re-sorted, k kept.
TopKLists in_final_order(const TopKLists& listed, const std::vector<float>& scores, std::size_t k);

// CPU: multi-threaded BLAS scoring through the pairwise engine.
struct CpuIndex {
  const Model* model = nullptr;
  std::vector<float> inv_norms;  // 1 / norm, 0 for zero vectors
};
CpuIndex make_cpu_index(const Model& model);
TopKLists search_cpu(const CpuIndex& index, const float* directions, std::size_t queries,
                     std::size_t k, std::size_t memory_budget);

// GPU: the model uploaded once (unit rows in the chosen precision). Defined in
// search_cuda.cu; a CPU-only build's version throws Failure.
struct GpuIndex;
struct GpuIndexDeleter {
  void operator()(GpuIndex* index) const noexcept;
};
using GpuIndexPtr = std::unique_ptr<GpuIndex, GpuIndexDeleter>;

GpuIndexPtr make_gpu_index(const Model& model, const SearchOptions& options);
TopKLists search_gpu(GpuIndex& index, const float* directions, std::size_t queries,
                     std::size_t k, double* device_ms);
double gpu_setup_ms(const GpuIndex& index);

}  // namespace simkit::neighbors::detail
