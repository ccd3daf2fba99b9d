// All-pairs matching of prepared CTPH signatures on the CPU (see simkit/dedup.hpp).
//
// A score above 0 needs identical signatures or, in a pair of parts compared at the same
// block size, a common 7-character substring. So candidates come from an index keyed by
// (block size of the part, 7-gram) plus one key per whole signature: two signatures
// sharing a key have compatible block sizes and something to score. Where a signature's
// index lists are longer than the compatible signatures themselves (very common
// substrings), it meets those directly instead, so the work never exceeds all pairs.
#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_sort.h>
#include <xxhash.h>

#include "dedup/compatible.hpp"
#include "dedup/run_ends.hpp"
#include "dedup/sorted_runs.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "simkit/progress.hpp"
#include "simkit/uninitialized_allocator.hpp"

namespace simkit::dedup {

namespace {

struct Posting {
  std::uint64_t key;
  std::uint32_t signature;
  std::uint32_t slot;  // its place before the sort (in what was padding)
  friend bool operator<(const Posting& p, const Posting& q) {
    return p.key != q.key ? p.key < q.key : p.signature < q.signature;
  }
};

std::uint64_t level_key(std::uint64_t block_size, std::uint64_t gram) {
  return gram ^ (block_size * 0x9E3779B97F4A7C15ull);
}

std::uint64_t identity_key(const ctph::Prepared& s) {
  const std::string text = std::to_string(s.block_size) + ":" + s.first.text + ":" + s.second.text;
  return XXH3_64bits(text.data(), text.size());
}

// A part's distinct substrings (its sorted runs once each).
std::uint32_t distinct_runs(const ctph::Prepared::Part& part) {
  std::uint32_t count = 0;
  for (std::size_t k = 0; k < part.runs.size(); ++k) count += k == 0 || part.runs[k] != part.runs[k - 1];
  return count;
}

Posting* add_part(const ctph::Prepared::Part& part, std::uint64_t block_size, std::uint32_t index, Posting* begin,
                  Posting* out) {
  for (std::size_t k = 0; k < part.runs.size(); ++k)
    if (k == 0 || part.runs[k] != part.runs[k - 1]) {
      *out = {level_key(block_size, part.runs[k]), index, static_cast<std::uint32_t>(out - begin)};
      ++out;
    }
  return out;
}

// Postings sorted by key; for each signature, where its own postings lie; for each
// posting, the end of its run of equal keys.
struct Index {
  std::vector<Posting, UninitializedAllocator<Posting>> postings;
  std::vector<std::uint32_t> run_end;
  std::vector<std::uint32_t> own_begin, own;  // own[own_begin[i] .. own_begin[i + 1]): signature i's
};

Index build_index(const std::vector<ctph::Prepared>& signatures) {
  Index index;
  const std::size_t count = signatures.size();
  // Each signature's postings counted, then written in place on all cores: a million
  // signatures' 90 million postings, where per-thread lists joined and grown cost more
  // in fresh pages than their sort.
  std::vector<std::uint64_t> first(count + 1, 0);
  tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
    first[i + 1] = 1 + distinct_runs(signatures[i].first) + distinct_runs(signatures[i].second);
  });
  for (std::size_t i = 0; i < count; ++i) first[i + 1] += first[i];
  const std::uint64_t n = first[count];
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw UsageError(fmt::format("ssdeep matching on the CPU: {} signatures hold {} keys, at most 2^32 - 1 can be indexed",
                                 count, n));
  index.postings.resize(n);
  tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
    const ctph::Prepared& s = signatures[i];
    const auto at = static_cast<std::uint32_t>(i);
    Posting* const begin = index.postings.data();
    Posting* out = begin + first[i];
    *out++ = {identity_key(s), at, static_cast<std::uint32_t>(first[i])};
    out = add_part(s.first, s.block_size, at, begin, out);
    add_part(s.second, s.block_size * 2, at, begin, out);  // wrapped past 2^64, as compare() doubles it
  });
  tbb::parallel_sort(index.postings.begin(), index.postings.end());
  const auto& postings = index.postings;
  index.run_end.resize(n);
  fill_run_ends(std::span<const Posting>(postings.data(), n), [](const Posting& p) { return p.key; },
                std::span<std::uint32_t>(index.run_end));
  // Each signature's postings listed where they were written before the sort.
  index.own_begin.assign(first.begin(), first.end());
  index.own.resize(n);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t p) { index.own[postings[p].slot] = static_cast<std::uint32_t>(p); });
  return index;
}

}  // namespace

MatchList match_all(const std::vector<ctph::Prepared>& signatures, int threshold, Progress* progress,
                    Share share) {
  threshold = std::clamp(threshold, 1, 100);  // the index finds only pairs scoring above 0
  // (Signatures prepared for the GPU alone would score 0 where they share a substring.)
  if (!tbb::parallel_reduce(
          tbb::blocked_range<std::size_t>(0, signatures.size()), true,
          [&](const auto& range, bool ok) {
            for (std::size_t i = range.begin(); ok && i != range.end(); ++i) ok = ctph::has_substrings(signatures[i]);
            return ok;
          },
          std::logical_and<>()))
    throw std::logic_error("match_all: signatures prepared without their substrings (ctph::Substrings::left_out)");
  std::vector<std::uint64_t> sizes(signatures.size());
  for (std::size_t i = 0; i < signatures.size(); ++i) sizes[i] = signatures[i].block_size;
  const CompatibleGroups groups(sizes);
  const Index index = build_index(signatures);

  struct Scratch {
    MatchList found;
    std::vector<std::uint32_t> seen;  // seen[j] == i + 1: j already met i
  };
  tbb::enumerable_thread_specific<Scratch> scratch;
  const RowRange rows = share_rows(signatures.size(), true, share);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(rows.begin, rows.end, 256), [&](const auto& range) {
    Scratch& local = scratch.local();
    local.seen.resize(signatures.size(), 0);
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      const auto me = static_cast<std::uint32_t>(i);
      const auto meet = [&](std::uint32_t j) {
        const int score = ctph::compare(signatures[i], signatures[j]);
        if (score >= threshold) local.found.push_back(Match{me, j, score});
      };
      std::uint64_t listed = 0;
      for (std::uint32_t k = index.own_begin[i]; k < index.own_begin[i + 1]; ++k)
        listed += index.run_end[index.own[k]] - index.own[k] - 1;
      if (listed >= groups.later_count(me)) {
        groups.for_each_later(me, meet);
        continue;
      }
      for (std::uint32_t k = index.own_begin[i]; k < index.own_begin[i + 1]; ++k) {
        const std::uint32_t p = index.own[k];
        for (std::uint32_t q = p + 1; q < index.run_end[p]; ++q) {
          const std::uint32_t j = index.postings[q].signature;
          if (j <= me || local.seen[j] == me + 1) continue;
          local.seen[j] = me + 1;
          meet(j);
        }
      }
    }
    if (progress != nullptr) progress->advance(range.size());
  });
  MatchList all;
  std::size_t total = 0;
  for (const auto& part : scratch) total += part.found.size();
  all.reserve(total);
  for (auto& part : scratch) all.insert(all.end(), part.found.begin(), part.found.end());
  tbb::parallel_sort(all.begin(), all.end(), by_pair);
  return all;
}

}  // namespace simkit::dedup
