// Top-k selection with one total order everywhere (CPU and GPU): a higher score ranks
// first, and among equal scores the lower index ranks first. NaN scores never enter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace simkit {

inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();
inline constexpr float kEmptyScore = -std::numeric_limits<float>::infinity();

// True when (score_a, a) comes before (score_b, b) in the result order.
inline bool ranks_before(float score_a, std::uint32_t a, float score_b, std::uint32_t b) noexcept {
  return score_a > score_b || (score_a == score_b && a < b);
}

// The k best entries of many rows, row-major (rows x k), each row best first.
// Unused slots hold (kEmptyScore, kNoIndex) and sort last.
struct TopKLists {
  std::size_t rows = 0;
  std::size_t k = 0;
  std::vector<float> scores;
  std::vector<std::uint32_t> indices;

  TopKLists() = default;
  TopKLists(std::size_t rows, std::size_t k);

  std::span<const float> row_scores(std::size_t r) const { return {scores.data() + r * k, k}; }
  std::span<const std::uint32_t> row_indices(std::size_t r) const {
    return {indices.data() + r * k, k};
  }
  // Number of filled slots of row r.
  std::size_t filled(std::size_t r) const;
};

// Bounded selection for one row: keeps the k entries that rank first among all pushed.
// A binary heap with the worst kept entry on top, so a reject costs one comparison.
class TopKHeap {
 public:
  explicit TopKHeap(std::size_t k);
  bool accepts(float score, std::uint32_t index) const noexcept {
    return size_ < k_ ? !(score != score) : ranks_before(score, index, scores_[0], indices_[0]);
  }
  void push(float score, std::uint32_t index) noexcept;
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return k_; }
  // Writes the kept entries best first into k slots (padding with empty slots).
  void write_sorted(float* scores, std::uint32_t* indices);
  void clear() noexcept { size_ = 0; }

 private:
  void sift_down(std::size_t i) noexcept;
  std::size_t k_;
  std::size_t size_ = 0;
  std::vector<float> scores_;
  std::vector<std::uint32_t> indices_;
};

// Merges the top-k of each row of a dense block of scores into `into`:
// block row r is row `row_offset + r` of `into`, column c has index `col_offset + c`.
// With `skip_diagonal`, entries whose index equals their row's global number are ignored.
void merge_block_topk(const float* scores, std::size_t rows, std::size_t cols, std::size_t ld,
                      std::size_t row_offset, std::uint32_t col_offset, bool skip_diagonal,
                      TopKLists& into);

// Merges every row of `from` into the same row of `into` (same rows and k).
void merge_topk(TopKLists& into, const TopKLists& from);

// Simple reference: sorts each row completely. For tests and tiny inputs.
TopKLists topk_reference(const float* scores, std::size_t rows, std::size_t cols, std::size_t k);

}  // namespace simkit

namespace simkit::gpu {
// The top-k of each row of a host score matrix (rows x cols) computed on CUDA device
// `device` with the engine's selection kernels; k up to 1024. For tests and tools.
TopKLists topk(const float* scores, std::size_t rows, std::size_t cols, std::size_t k, int device);
}  // namespace simkit::gpu
