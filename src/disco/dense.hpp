// Internal: the column-reduced (dense) rows of a model, shared by the CPU and GPU paths.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <vector>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include "core/page_locked_once.hpp"
#include "core/prefault.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/threads.hpp"

namespace simkit::disco::detail {

// How many of `entries` keys are each key below key_count (words having each feature or
// column: a word lists one once), counted on all cores.
inline std::vector<std::uint32_t> count_keys(const std::uint32_t* keys, std::size_t entries, std::size_t key_count) {
  constexpr std::size_t kGrain = 1 << 16;
  if (key_count * max_threads() <= entries + (std::size_t{1} << 20)) {
    // Few keys: a count each per thread (shared counters of common keys would make every
    // thread wait on the same cache lines), summed key range by key range.
    tbb::enumerable_thread_specific<std::vector<std::uint32_t>> counts(
        [&] { return std::vector<std::uint32_t>(key_count, 0); });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, entries, kGrain), [&](const auto& range) {
      std::vector<std::uint32_t>& mine = counts.local();
      for (std::size_t i = range.begin(); i < range.end(); ++i) ++mine[keys[i]];
    });
    std::vector<std::uint32_t> out(key_count, 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, key_count, 1 << 14), [&](const auto& range) {
      for (const std::vector<std::uint32_t>& mine : counts)
        for (std::size_t k = range.begin(); k < range.end(); ++k) out[k] += mine[k];
    });
    return out;
  }
  std::vector<std::atomic<std::uint32_t>> shared(key_count);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, entries, kGrain), [&](const auto& range) {
    for (std::size_t i = range.begin(); i < range.end(); ++i) shared[keys[i]].fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<std::uint32_t> out(key_count);
  for (std::size_t k = 0; k < key_count; ++k) out[k] = shared[k].load(std::memory_order_relaxed);
  return out;
}

// Side of the GPU's square score tiles in the dense form (64 MiB of scores: see
// DenseScorer); several workers share the words in ranges of this many rows so that
// each scores the tiles one GPU alone would.
constexpr std::size_t kGpuTileRows = 4096;

// Maps feature ids to dense columns and writes, for Lin, rows [A_i | M_i] (left) or
// [M_i | A_i] (right), each half F values and then zeros to its length, so that
// left_i . right_j = (A.M^T + M.A^T)_ij; for PPMI's cosine, rows A_i / |A_i| (one half:
// left and right alike), so that left_i . right_j is the cosine over the columns.
struct DenseRows {
  bool cosine = false;                  // the model's measure is PPMI
  std::vector<std::uint32_t> columns;  // feature ids, sorted, for lookup
  std::vector<std::uint32_t> column_of;  // dense column of columns[c]
  // Dense column of each feature id (kNotAColumn if none) when the ids are few enough for
  // a table; else empty, and ids are looked up in `columns`.
  static constexpr std::uint32_t kNotAColumn = ~std::uint32_t{0};
  std::vector<std::uint32_t> column_by_id;
  std::vector<float> sums;              // per word: Lin: row sums of A; cosine: norms of A's rows
  std::size_t width = 0;                // F
  // Values a half row takes: F rounded up to 64, so that every half row starts aligned
  // (cuBLAS falls back to far slower unaligned tensor-core kernels when a leading
  // dimension is not a multiple of 4: bench/results/disco.md) and the fused self-join
  // reads the rotated rows in whole 128-byte slices (32 floats, 64 halves).
  std::size_t pitch = 0;
  bool stored = false;                  // the model's own dense form has these columns

  DenseRows(const Model& model, std::size_t features) : cosine(model.measure == Measure::ppmi) {
    const std::vector<std::uint32_t> chosen = dense_columns(model, features);
    width = chosen.size();
    pitch = (width + 63) / 64 * 64;
    stored = !model.dense.empty() && chosen == model.dense_features;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id;
    for (std::size_t c = 0; c < chosen.size(); ++c) by_id.emplace_back(chosen[c], static_cast<std::uint32_t>(c));
    std::sort(by_id.begin(), by_id.end());
    for (const auto& [id, c] : by_id) columns.push_back(id), column_of.push_back(c);
    if (!by_id.empty() && by_id.back().first < (std::uint32_t{1} << 24)) {  // a table of at most 64 MiB
      column_by_id.assign(std::size_t{by_id.back().first} + 1, kNotAColumn);
      for (const auto& [id, c] : by_id) column_by_id[id] = c;
    }
    sums.assign(model.size(), 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, model.size(), 256), [&](const auto& range) {
      for (std::size_t w = range.begin(); w < range.end(); ++w) {
        double s = 0;
        for_each(model, w, [&](std::size_t, float mi) { s += cosine ? static_cast<double>(mi) * mi : mi; });
        sums[w] = static_cast<float>(cosine ? std::sqrt(s) : s);
      }
    });
  }

  // Values a row takes, given a half of `half` values: two halves for Lin, one for cosine.
  std::size_t row_width(std::size_t half) const { return cosine ? half : 2 * half; }

  // What word w's weight `mi` becomes in its A half: itself (Lin) or scaled to unit length.
  float scaled(std::size_t w, float mi) const { return cosine ? mi / sums[w] : mi; }

  // Calls f(column, mi) for each of word w's features among the columns.
  template <typename F>
  void for_each(const Model& m, std::size_t w, F&& f) const {
    if (!column_by_id.empty()) {
      for (std::uint64_t i = m.offsets[w]; i < m.offsets[w + 1]; ++i) {
        const std::uint32_t id = m.features[i];
        if (id >= column_by_id.size()) return;  // a word's ids ascend
        if (const std::uint32_t c = column_by_id[id]; c != kNotAColumn) f(c, m.mi[i]);
      }
      return;
    }
    auto it = columns.begin();
    for (std::uint64_t i = m.offsets[w]; i < m.offsets[w + 1]; ++i) {
      it = std::lower_bound(it, columns.end(), m.features[i]);
      if (it == columns.end()) return;
      if (*it == m.features[i]) f(column_of[static_cast<std::size_t>(it - columns.begin())], m.mi[i]);
    }
  }

  // Calls f(column, mi) for each of word w's nonzero columns: from the model's dense form
  // when these are its columns, else from its sparse form.
  template <typename F>
  void each(const Model& m, std::size_t w, F&& f) const {
    if (!stored) return for_each(m, w, f);
    const float* values = m.dense.data() + w * width;
    for (std::size_t c = 0; c < width; ++c)
      if (values[c] != 0) f(c, values[c]);
  }

  // Every word's nonzero columns and their values (A's, scaled), word after word: what
  // the GPU scatters into resident rows. Gathered on all cores once, on first use, and
  // shared by the workers of a process (each GPU's scorer uploads the same entries).
  struct Entries {
    std::vector<std::uint64_t> offsets;  // words + 1
    std::vector<std::uint32_t> columns;
    std::vector<float> values;
    std::vector<std::uint32_t> words_having;  // per column
    // The arrays page-locked for the GPUs' uploads, once a process; declared last, so
    // unlocked before the arrays are freed.
    PageLockedOnce page_locked;
  };
  const Entries& entries(const Model& m) const {
    if (!entries_once_) throw Failure("internal: the entries of moved dense rows");
    std::call_once(entries_once_->flag, [&] {
      Entries& e = entries_once_->entries;
      e.offsets.assign(m.size() + 1, 0);
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m.size(), 256), [&](const auto& range) {
        for (std::size_t w = range.begin(); w < range.end(); ++w) {
          std::uint64_t n = 0;
          each(m, w, [&](std::size_t, float) { ++n; });
          e.offsets[w + 1] = n;
        }
      });
      std::partial_sum(e.offsets.begin(), e.offsets.end(), e.offsets.begin());
      // (Faulted in on all cores, as huge pages where granted: they are page-locked next.)
      e.columns = zeroed_vector<std::uint32_t>(e.offsets.back());
      e.values = zeroed_vector<float>(e.offsets.back());
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m.size(), 256), [&](const auto& range) {
        for (std::size_t w = range.begin(); w < range.end(); ++w) {
          std::uint64_t at = e.offsets[w];
          each(m, w, [&](std::size_t c, float mi) {
            e.columns[at] = static_cast<std::uint32_t>(c);
            e.values[at++] = scaled(w, mi);
          });
        }
      });
      e.words_having = count_keys(e.columns.data(), e.columns.size(), width);
    });
    return entries_once_->entries;
  }

  // Rows first .. first + count into out (count x row_width(half), row-major; half >= F:
  // the GPU's pitch, or F on the CPU, where BLAS gains nothing from the padding).
  void write(const Model& m, std::size_t first, std::size_t count, bool left, float* out, std::size_t half) const {
    const std::size_t width_out = row_width(half);
    std::fill(out, out + count * width_out, 0.0f);
    for (std::size_t r = 0; r < count; ++r) {
      float* row = out + r * width_out;
      each(m, first + r, [&](std::size_t c, float mi) {
        if (cosine) {
          row[c] = scaled(first + r, mi);
          return;
        }
        row[left ? c : half + c] = mi;
        row[left ? half + c : c] = 1.0f;
      });
    }
  }

 private:
  struct EntriesOnce {
    std::once_flag flag;
    Entries entries;
  };
  // Shared by copies (the same rows); null once moved from.
  std::shared_ptr<EntriesOnce> entries_once_ = std::make_shared<EntriesOnce>();
};

}  // namespace simkit::disco::detail
