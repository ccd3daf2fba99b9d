#include <algorithm>
#include <cstring>
#include <vector>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <fmt/format.h>

#include "engine/block_mask.hpp"
#include "engine/pairwise_common.hpp"
#include "simkit/error.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/progress.hpp"
#include "simkit/threads.hpp"

namespace simkit {

using detail::BlockMask;

namespace {

constexpr std::size_t kDefaultCpuBudget = std::size_t{256} << 20;
// Tiles small enough to stay in a core's cache and many enough to keep all cores busy.
constexpr std::size_t kCpuTileElements = std::size_t{1} << 19;
constexpr std::size_t kCpuPreferredA = 512;
constexpr std::size_t kBlocksPerThread = 8;  // enough pieces to balance the threads

struct ThreadState {
  TopKLists topk;
  std::vector<ScoredPair> pairs;
  std::vector<float> tile;
  std::vector<float> transposed;
  std::vector<float> candidate_scores;
  std::vector<std::uint32_t> candidate_indices;
};

// Merges the masked entries of a block into per-row top-k lists. Rows whose current
// k-th entry beats everything in the block are skipped after one pass.
void merge_masked(const float* tile, std::size_t rows, std::size_t cols, std::size_t ld,
                  std::size_t row0, std::size_t col0, BlockMask mask, TopKLists& into,
                  ThreadState& state) {
  const std::size_t k = into.k;
  TopKHeap heap(k);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t row = row0 + r;
    float* kept_scores = into.scores.data() + row * k;
    std::uint32_t* kept_indices = into.indices.data() + row * k;
    const float last_score = kept_scores[k - 1];
    const std::uint32_t last_index = kept_indices[k - 1];
    const float* line = tile + r * ld;
    // Usually nothing in the block reaches the row's k-th best: one vectorised pass says so.
    float best = kEmptyScore;
#pragma omp simd reduction(max : best)
    for (std::size_t c = 0; c < cols; ++c) best = line[c] > best ? line[c] : best;
    if (best < last_score) continue;
    state.candidate_scores.clear();
    state.candidate_indices.clear();
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t col = col0 + c;
      const auto index = static_cast<std::uint32_t>(col);
      if (!(line[c] == line[c])) continue;
      if (!ranks_before(line[c], index, last_score, last_index)) continue;
      if (!mask.keeps(row, col)) continue;
      state.candidate_scores.push_back(line[c]);
      state.candidate_indices.push_back(index);
    }
    if (state.candidate_scores.empty()) continue;
    heap.clear();
    for (std::size_t i = 0; i < k && kept_indices[i] != kNoIndex; ++i)
      heap.push(kept_scores[i], kept_indices[i]);
    for (std::size_t i = 0; i < state.candidate_scores.size(); ++i)
      if (heap.accepts(state.candidate_scores[i], state.candidate_indices[i]))
        heap.push(state.candidate_scores[i], state.candidate_indices[i]);
    heap.write_sorted(kept_scores, kept_indices);
  }
}

void collect_hits(const float* tile, RowRange a, RowRange b, std::size_t ld, float threshold,
                  BlockMask mask, std::vector<ScoredPair>& out) {
  for (std::size_t r = 0; r < a.size(); ++r) {
    const float* line = tile + r * ld;
    for (std::size_t c = 0; c < b.size(); ++c) {
      if (line[c] >= threshold && mask.keeps(a.begin + r, b.begin + c))
        out.push_back({static_cast<std::uint32_t>(a.begin + r),
                       static_cast<std::uint32_t>(b.begin + c), line[c]});
    }
  }
}

}  // namespace

PairwiseResult pairwise_cpu(const PairwiseJob& job, const BlockScoreFn& score) {
  detail::validate(job);
  PairwiseResult result;
  if (job.k > 0) result.topk = TopKLists(job.rows_a, job.k);
  if (job.rows_a == 0 || job.rows_b == 0) return result;

  const std::size_t threads = std::max<std::size_t>(1, max_threads());
  const std::size_t budget = job.memory_budget ? job.memory_budget : kDefaultCpuBudget;
  // Each thread holds a tile and, in symmetric mode, its transpose.
  const std::size_t tile_floats = std::clamp<std::size_t>(
      budget / (threads * sizeof(float) * (job.symmetric ? 2 : 1)), 1, kCpuTileElements);
  detail::BlockSizes sizes = detail::block_sizes(job, tile_floats, kCpuPreferredA);
  if (!job.symmetric) {
    const std::size_t a_blocks = (job.rows_a + sizes.a - 1) / sizes.a;
    const std::size_t wanted_b = (kBlocksPerThread * threads + a_blocks - 1) / a_blocks;
    sizes.b = std::clamp<std::size_t>((job.rows_b + wanted_b - 1) / wanted_b, 1, sizes.b);
  }
  const auto blocks = detail::block_pairs(job, sizes);
  result.blocks = blocks.size();

  tbb::enumerable_thread_specific<ThreadState> states([&] {
    ThreadState s;
    if (job.k > 0) s.topk = TopKLists(job.rows_a, job.k);
    return s;
  });

  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, blocks.size(), 1),
      [&](const tbb::blocked_range<std::size_t>& range) {
        ThreadState& state = states.local();
        for (std::size_t n = range.begin(); n != range.end(); ++n) {
          const auto [a, b] = blocks[n];
          const std::size_t ld = b.size();
          state.tile.resize(a.size() * ld);
          score(a, b, state.tile.data(), ld);
          const bool diagonal = job.symmetric && a.begin == b.begin;
          BlockMask row_mask{.skip_diagonal = job.exclude_self,
                             .triangle = diagonal ? +1 : 0};
          if (job.k > 0) {
            merge_masked(state.tile.data(), a.size(), b.size(), ld, a.begin, b.begin, row_mask,
                         state.topk, state);
            if (job.symmetric) {
              // The same scores count for the rows of B (strictly below the diagonal).
              state.transposed.resize(a.size() * b.size());
              for (std::size_t r = 0; r < a.size(); ++r)
                for (std::size_t c = 0; c < b.size(); ++c)
                  state.transposed[c * a.size() + r] = state.tile[r * ld + c];
              BlockMask col_mask{.skip_diagonal = true, .triangle = diagonal ? -1 : 0};
              merge_masked(state.transposed.data(), b.size(), a.size(), a.size(), b.begin,
                           a.begin, col_mask, state.topk, state);
            }
          }
          if (job.threshold)
            collect_hits(state.tile.data(), a, b, ld, *job.threshold, row_mask, state.pairs);
          if (job.progress) job.progress->advance(a.size() * b.size());
        }
      });

  for (ThreadState& state : states) {
    if (job.k > 0) merge_topk(result.topk, state.topk);
    result.pairs.insert(result.pairs.end(), state.pairs.begin(), state.pairs.end());
  }
  detail::sort_pairs(result.pairs);
  return result;
}

}  // namespace simkit
