// The two search back ends behind Searcher: both return, for each direction, the k
// rows of highest cosine similarity (ties: lower row first), excluding nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "simkit/neighbors.hpp"
#include "simkit/pairwise.hpp"
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
// The k best of `rows` (default: all the index's rows), numbered from rows->begin.
TopKLists search_gpu(GpuIndex& index, const float* directions, std::size_t queries,
                     std::size_t k, double* device_ms, std::optional<RowRange> rows = std::nullopt);
double gpu_setup_ms(const GpuIndex& index);
// Device bytes an index of `model` holds at `precision` (its rows, and at fp32/tf32 the
// fp16 copy the filter reads), for the choice of replicas against shards.
std::size_t gpu_index_bytes(const Model& model, Precision precision);

// The choice of GpuSplit::Automatic (include/simkit/neighbors.hpp), apart so that tests
// can check it: whether `gpus` GPUs (of every rank) each hold the whole index (of
// `index_bytes`; the smallest free memory among them `smallest_free`), and whether a
// batch of `queries` over such replicas is shared out by queries (else by rows).
bool use_replicas(GpuSplit split, std::size_t gpus, std::size_t index_bytes, std::size_t smallest_free);
bool split_by_queries(GpuSplit split, std::size_t queries, std::size_t gpus);

// part's rows copied into `into` from row first_row on (part.k <= into.k; the rest of
// each row left as it is).
void place_rows(TopKLists& into, std::size_t first_row, const TopKLists& part);

}  // namespace simkit::neighbors::detail
