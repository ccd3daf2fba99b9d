// The blocked pairwise engine: score every row of A against every row of B and keep
// the k best per row of A and/or every pair whose score reaches a threshold.
//
// Scores are "larger is better" (a distance scorer returns minus the distance).
// A x B is cut into blocks that fit a memory budget; on the GPU the copy of the next
// B block overlaps the scoring of this one. In symmetric mode (A is B) each unordered
// pair is scored once and its score counts for both rows.
//
// The scoring itself is pluggable: a CPU scorer is a function that fills a dense
// block of scores; a GPU scorer (BlockScorer below) stages rows on the device and
// fills a device tile. Selection (top-k merge, threshold hits) is the engine's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "simkit/topk.hpp"

struct CUstream_st;  // cudaStream_t without including CUDA headers

namespace simkit {

class Progress;

struct RowRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const noexcept { return end - begin; }
};

struct PairwiseJob {
  std::size_t rows_a = 0;
  std::size_t rows_b = 0;
  std::size_t k = 0;                  // keep the k best per row of A (0: no top-k)
  std::optional<float> threshold;     // keep every pair with score >= threshold
  bool symmetric = false;             // A is B: pairs (a, b) with a <= b are scored once
  bool exclude_self = false;          // never pair a row with itself (symmetric mode)
  std::size_t memory_budget = 0;      // bytes for blocks and tiles; 0 = automatic
  Progress* progress = nullptr;       // advanced by the number of scored pairs
  // Only these rows of A are scored (against every row of B; symmetric: against the rows
  // of B from their own on): this worker's share of a job split among processes or GPUs
  // (share_rows, share_blocks). Ranges in order, none overlapping; none: nothing to score
  // (a worker left without a share). Unset: all of A.
  std::optional<std::vector<RowRange>> a_rows;
};

struct ScoredPair {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  float score = 0;
  friend bool operator==(const ScoredPair&, const ScoredPair&) = default;
};

struct PairwiseResult {
  TopKLists topk;                     // rows_a x k (empty when k == 0)
  std::vector<ScoredPair> pairs;      // threshold hits sorted by (a, b); symmetric: a < b
                                      // (a == b too when exclude_self is false)
  std::size_t blocks = 0;             // block pairs scored (tells how the budget cut)
  bool fused = false;                 // GPU: most of B went through the fused path
};

// Rows of A for worker `part` of `parts`, balanced by the pairs they score: in a
// symmetric job row i meets the rows from i on, so the first rows weigh the most.
// Contiguous, in order, covering every row once.
RowRange share_rows(std::size_t rows, bool symmetric, std::size_t part, std::size_t parts);
// A worker's part of a job shared among `parts` workers.
struct Share {
  std::size_t part = 0;
  std::size_t parts = 1;
};
inline RowRange share_rows(std::size_t rows, bool symmetric, Share share) {
  return share_rows(rows, symmetric, share.part, share.parts);
}
// Rows of A for worker `share.part` of `share.parts` as ranges of `unit` rows (the last
// shorter), dealt out back and forth: 0, 1, .., parts - 1, parts - 1, .., 0, 0, 1, ...
// In a symmetric job the first ranges weigh the most; dealing them so gives each worker
// nearly the same pairs and the same number of blocks on the diagonal (a contiguous share
// of equal pairs has more of those the later it starts). With `unit` a multiple of the
// engine's block side, a worker's blocks are blocks that one worker alone would score.
// `unit` is halved (down to 128 rows) until every worker gets at least four ranges (the
// ranges then cut the engine's blocks smaller); with fewer ranges than workers, some get
// none. Depends only on its arguments, so every rank of a run deals the same ranges.
std::vector<RowRange> share_blocks(std::size_t rows, std::size_t unit, Share share);

// The results of a job's shares (a_rows), one from each rank (include/simkit/cluster.hpp),
// merged on rank 0: top-k lists row by row (ties by lower index; a row's lists from
// different shares together), threshold pairs in (a, b) order. Alone: the result as it is.
// Other ranks get an empty result.
PairwiseResult gather_results(PairwiseResult mine);
TopKLists gather_topk(TopKLists mine);

// Fills out[(i - a.begin) * ld + (j - b.begin)] with score(i, j) for i in a, j in b.
// Called concurrently from several threads on disjoint blocks.
using BlockScoreFn = std::function<void(RowRange a, RowRange b, float* out, std::size_t ld)>;

// Multi-threaded CPU engine. Results do not depend on the budget or the thread count.
PairwiseResult pairwise_cpu(const PairwiseJob& job, const BlockScoreFn& score);

// How the engine cut the work (exposed for tests and --timings).
struct BlockPlan {
  std::size_t rows_a_per_block = 0;
  std::size_t rows_b_per_block = 0;
  bool b_resident = false;  // GPU: all of B stays on the device
};

namespace gpu {

using Stream = CUstream_st*;

// Where a fused scorer puts the scores that can still enter a row's top k (device
// memory): row i of A owns scores/indices[i * capacity, (i + 1) * capacity) and
// counts[i], which counts every offer, also those past the capacity. A score is offered
// when it ranks before slot `bar` of its row's running top-k (k - 1: nothing after the
// k-th best can still enter the answer).
struct CandidateLists {
  float* scores = nullptr;
  std::uint32_t* indices = nullptr;
  std::uint32_t* counts = nullptr;
  std::size_t capacity = 0;
  int bar = 0;
};

// A GPU scorer: the engine hands it device memory for row blocks and a tile to fill.
// Every call is asynchronous on the given stream.
class BlockScorer {
 public:
  virtual ~BlockScorer() = default;
  // Device bytes one staged row of A / of B needs.
  virtual std::size_t bytes_per_row_a() const = 0;
  virtual std::size_t bytes_per_row_b() const = 0;
  // True when all of B already lives on the device (load_b is then never called and
  // `b_slot` in score() is nullptr).
  virtual bool b_resident() const { return false; }
  // Bytes of score tile this scorer runs best with (0: the engine's default, 32 MiB).
  // Products over long rows keep tensor cores busier on larger tiles.
  virtual std::size_t preferred_tile_bytes() const { return 0; }
  // Copies rows of A / B to device memory at `slot` (host-side staging is the scorer's).
  virtual void load_a(RowRange rows, void* slot, Stream stream) = 0;
  virtual void load_b(RowRange rows, void* slot, Stream stream) = 0;
  // Writes score(i, j) to tile[(i - a.begin) * ld + (j - b.begin)] (device memory).
  virtual void score(const void* a_slot, RowRange a, const void* b_slot, RowRange b,
                     float* tile, std::size_t ld, Stream stream) = 0;
  // Optional fused path (B resident only): true when offer_candidates() works.
  virtual bool offers_candidates() const { return false; }
  // Scores rows a (staged at a_slot) against rows b and offers to `lists` every score
  // that ranks before its row's current bar, slot lists.bar of the running top-k
  // (`state_scores/indices`, row-major, width per row, rows of A global).
  virtual void offer_candidates(const void* /*a_slot*/, RowRange /*a*/, RowRange /*b*/,
                                const float* /*state_scores*/, const std::uint32_t* /*state_indices*/,
                                int /*width*/, const CandidateLists& /*lists*/, Stream /*stream*/) {}
};

// The engine on CUDA device `device`: same results as pairwise_cpu (floats within the
// scorer's rounding), k up to 1024. Streams, events and device buffers are kept between
// runs, so repeated small jobs (one query at a time) allocate nothing after the first.
// Throws Failure when built without CUDA.
class Engine {
 public:
  explicit Engine(int device);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  PairwiseResult run(const PairwiseJob& job, BlockScorer& scorer);
  // The plan run() would use (budget from the device's free memory when 0).
  BlockPlan plan(const PairwiseJob& job, const BlockScorer& scorer) const;
  // Device milliseconds of the last run, from CUDA events around it.
  double last_ms() const;
  int device() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One job on a fresh engine.
PairwiseResult pairwise(const PairwiseJob& job, BlockScorer& scorer, int device);

}  // namespace gpu
}  // namespace simkit
