#include "simkit/topk.hpp"

#include <algorithm>
#include <numeric>

#include <oneapi/tbb/parallel_for.h>

namespace simkit {

TopKLists::TopKLists(std::size_t rows_, std::size_t k_)
    : rows(rows_), k(k_), scores(rows_ * k_, kEmptyScore), indices(rows_ * k_, kNoIndex) {}

std::size_t TopKLists::filled(std::size_t r) const {
  const auto idx = row_indices(r);
  return static_cast<std::size_t>(std::find(idx.begin(), idx.end(), kNoIndex) - idx.begin());
}

TopKHeap::TopKHeap(std::size_t k) : k_(k), scores_(k), indices_(k) {}

// The heap keeps the entry that ranks last at position 0.
void TopKHeap::push(float score, std::uint32_t index) noexcept {
  if (k_ == 0) return;
  if (size_ < k_) {
    std::size_t i = size_++;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!ranks_before(scores_[parent], indices_[parent], score, index)) break;
      scores_[i] = scores_[parent];
      indices_[i] = indices_[parent];
      i = parent;
    }
    scores_[i] = score;
    indices_[i] = index;
    return;
  }
  scores_[0] = score;
  indices_[0] = index;
  sift_down(0);
}

void TopKHeap::sift_down(std::size_t i) noexcept {
  const float score = scores_[i];
  const std::uint32_t index = indices_[i];
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= size_) break;
    // Follow the child that ranks later (the worse one).
    if (child + 1 < size_ &&
        ranks_before(scores_[child], indices_[child], scores_[child + 1], indices_[child + 1]))
      ++child;
    if (!ranks_before(score, index, scores_[child], indices_[child])) break;
    scores_[i] = scores_[child];
    indices_[i] = indices_[child];
    i = child;
  }
  scores_[i] = score;
  indices_[i] = index;
}

void TopKHeap::write_sorted(float* scores, std::uint32_t* indices) {
  std::vector<std::size_t> order(size_);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ranks_before(scores_[a], indices_[a], scores_[b], indices_[b]);
  });
  for (std::size_t i = 0; i < k_; ++i) {
    scores[i] = i < size_ ? scores_[order[i]] : kEmptyScore;
    indices[i] = i < size_ ? indices_[order[i]] : kNoIndex;
  }
}

// Seeds a heap with a sorted row's filled entries.
static void load_row(TopKHeap& heap, const TopKLists& lists, std::size_t r) {
  heap.clear();
  const auto s = lists.row_scores(r);
  const auto idx = lists.row_indices(r);
  for (std::size_t i = 0; i < lists.k && idx[i] != kNoIndex; ++i) heap.push(s[i], idx[i]);
}

void merge_block_topk(const float* scores, std::size_t rows, std::size_t cols, std::size_t ld,
                      std::size_t row_offset, std::uint32_t col_offset, bool skip_diagonal,
                      TopKLists& into) {
  if (into.k == 0) return;
  TopKHeap heap(into.k);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t row = row_offset + r;
    load_row(heap, into, row);
    const float* line = scores + r * ld;
    for (std::size_t c = 0; c < cols; ++c) {
      const auto index = static_cast<std::uint32_t>(col_offset + c);
      if (skip_diagonal && index == row) continue;
      if (heap.accepts(line[c], index)) heap.push(line[c], index);
    }
    heap.write_sorted(into.scores.data() + row * into.k, into.indices.data() + row * into.k);
  }
}

void merge_topk(TopKLists& into, const TopKLists& from) {
  // Rows are independent: merged on all cores (a few thousand rows a task).
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, into.rows, 2048), [&](const auto& range) {
    TopKHeap heap(into.k);
    for (std::size_t r = range.begin(); r < range.end(); ++r) {
      load_row(heap, into, r);
      const auto s = from.row_scores(r);
      const auto idx = from.row_indices(r);
      for (std::size_t i = 0; i < from.k && idx[i] != kNoIndex; ++i)
        if (heap.accepts(s[i], idx[i])) heap.push(s[i], idx[i]);
      heap.write_sorted(into.scores.data() + r * into.k, into.indices.data() + r * into.k);
    }
  });
}

TopKLists topk_reference(const float* scores, std::size_t rows, std::size_t cols, std::size_t k) {
  TopKLists out(rows, k);
  std::vector<std::uint32_t> order(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* line = scores + r * cols;
    order.clear();
    for (std::uint32_t c = 0; c < cols; ++c)
      if (line[c] == line[c]) order.push_back(c);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return ranks_before(line[a], a, line[b], b);
    });
    for (std::size_t i = 0; i < std::min(k, order.size()); ++i) {
      out.scores[r * k + i] = line[order[i]];
      out.indices[r * k + i] = order[i];
    }
  }
  return out;
}

}  // namespace simkit
