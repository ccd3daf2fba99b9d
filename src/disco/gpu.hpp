// Internal: disco's GPU paths (src/disco/cuda/): the all-pairs jobs and the pair counting.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "disco/dense.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::disco::detail {

// The job on CUDA device options.device: [A|M] rows of a block against [M|A] rows by
// cuBLAS (fp32, tf32 or fp16), each score divided by s_i + s_j, or by simkit's fused
// self-join (tf32 or fp16, Hopper). Throws Failure without CUDA.
TopKLists all_pairs_gpu(const Model& model, const DenseRows& rows, const PairwiseJob& job,
                        const AllPairsOptions& options, double* device_ms);

// The rows' entries (gathered here if they are not yet) page-locked, once a process,
// through GPU `device`'s context, made here if the driver has not made it yet: what the
// first GPU's scorer would do, done by a program while its GPUs start; `device` is left
// current. Throws Failure where the device cannot be used; nothing without CUDA.
void lock_entries(const Model& model, const DenseRows& rows, int device);

// The job in the sparse form on CUDA device options.device: every feature, scores summed
// from the words' inverted lists (src/disco/cuda/sparse_pairs.cu). Throws Failure
// without CUDA.
TopKLists all_pairs_sparse_gpu(const Model& model, const PairwiseJob& job, const AllPairsOptions& options,
                               double* device_ms);

}  // namespace simkit::disco::detail

namespace simkit::disco::detail {

// A corpus's window pairs to count on a GPU (build's pass 2, src/disco/cuda/pair_counts.cu).
// tokens: the model's word ids in corpus order; kPlace keeps a place (a stop or rare
// word: no pair, but windows count it), kSentenceEnd ends a sentence (windows never cross
// it). Keys are the CPU's: w1 << 32 | (w2 *
// relations + slot), for w1 < rows; PPMI's slot d - 1 folded to 0 with weight fold[d - 1]
// (lin: each key itself, counted once).
constexpr std::int32_t kPlace = -1, kSentenceEnd = -2;
struct PairCountJob {
  int device = 0;
  std::span<const std::int32_t> tokens;
  int window = 4;
  bool ppmi = false;
  std::uint64_t rows = 0;              // words that get keys (the model's N)
  std::vector<std::uint64_t> fold;     // ppmi: weight of distance d at d - 1
  std::vector<std::uint64_t> bounds;   // the first key of partitions 1..P-1 (KeyCounts's)
  std::size_t memory_budget = 0;       // device bytes to use; 0: half of what is free
};
using CountedRun = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
// Counts the job's pairs a chunk of tokens at a time (as device memory allows): each chunk's distinct keys with
// their counts, ascending and cut at the bounds (one run a partition), go to `parts`; the
// column marginals (ppmi: #(w2) weighted; lin: ||*, r, w2|| at w2 * relations + slot) are
// added to `column`. Throws Failure without CUDA.
// Returns the device's time in its kernels (pairs emitted, sorted, reduced), in ms.
double count_pairs_gpu(const PairCountJob& job, std::span<std::uint64_t> column,
                       const std::function<void(std::vector<CountedRun>)>& parts);

}  // namespace simkit::disco::detail
