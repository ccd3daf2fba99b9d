// A batch of queries on the CPU: queries in parallel, each by one algorithm.
#include <array>
#include <unordered_map>

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "postings/algorithms.hpp"
#include "postings/lists.hpp"
#include "postings/phases.hpp"
#include "simkit/error.hpp"
#include "simkit/progress.hpp"

namespace simkit::postings {

namespace {

constexpr std::array<std::pair<Algorithm, const char*>, 7> kNames = {{{Algorithm::svs, "svs"},
                                                                      {Algorithm::adaptive, "adaptive"},
                                                                      {Algorithm::hash, "hash"},
                                                                      {Algorithm::galloping, "galloping"},
                                                                      {Algorithm::simd, "simd"},
                                                                      {Algorithm::bitmap, "bitmap"},
                                                                      {Algorithm::automatic, "auto"}}};

// What the hash and bitmap algorithms build for each list the batch names, once (the
// automatic one uses the index's own bitmaps).
struct Prepared {
  std::unordered_map<std::uint32_t, std::size_t> slot;  // term -> entry below
  std::vector<detail::BucketDirectory> directories;
  std::vector<detail::Bitmap> bitmaps;
};

Prepared prepare(const Index& index, const Queries& queries, Algorithm algorithm) {
  Prepared p;
  if (algorithm != Algorithm::hash && algorithm != Algorithm::bitmap) return p;
  std::vector<std::uint32_t> terms;
  for (const std::uint32_t t : queries.terms)
    if (t != kNoTerm && p.slot.emplace(t, terms.size()).second) terms.push_back(t);
  if (algorithm == Algorithm::hash) p.directories.resize(terms.size());
  else p.bitmaps.resize(terms.size());
  tbb::parallel_for(std::size_t{0}, terms.size(), [&](std::size_t i) {
    if (algorithm == Algorithm::hash) p.directories[i] = detail::make_directory(index.list(terms[i]));
    else p.bitmaps[i] = detail::make_bitmap(index.list(terms[i]));
  });
  return p;
}

struct Scratch {
  std::vector<std::uint32_t> terms;
  std::vector<detail::List> lists;
  std::vector<detail::ListAux> aux;
  std::vector<DocId> spare;
};

}  // namespace

void copy_ids(const DocId* from, std::size_t n, DocId* to) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, std::size_t{1} << 14),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      std::copy(from + r.begin(), from + r.end(), to + r.begin());
                    });
}

const char* algorithm_name(Algorithm algorithm) noexcept {
  for (const auto& [a, name] : kNames)
    if (a == algorithm) return name;
  return "?";
}

Algorithm parse_algorithm(std::string_view name) {
  for (const auto& [a, n] : kNames)
    if (name == n) return a;
  throw UsageError(fmt::format("unknown algorithm {} (expected svs, adaptive, hash, galloping, simd, bitmap or auto)",
                               quote(name)));
}

void intersect_lists(std::span<const std::span<const DocId>> lists, Algorithm algorithm, std::vector<DocId>& out) {
  std::vector<detail::List> ordered(lists.begin(), lists.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](auto a, auto b) { return a.size() < b.size(); });
  std::vector<DocId> scratch;
  detail::intersect(ordered, {}, algorithm, out, scratch);
}

Results intersect_cpu(const Index& index, const Queries& queries, Algorithm algorithm, bool count_only,
                      Progress* progress) {
  Results results;
  intersect_cpu(index, queries, algorithm, results, count_only, progress);
  std::vector<std::vector<DocId>>().swap(results.per_query);  // (kept only where the caller reuses the Results)
  return results;
}

namespace {

void answer_batch(const Index& index, const Queries& queries, Algorithm algorithm, Results& results, bool count_only,
                  Progress* progress) {
  detail::Phases phases("cpu batch");
  const Prepared prepared = prepare(index, queries, algorithm);
  phases.mark("prepare");
  const std::size_t n = queries.size();
  std::vector<std::vector<DocId>>& answers = results.per_query;  // (grown, never shrunk: storage kept)
  if (!count_only && answers.size() < n) answers.resize(n);
  results.ids.clear();
  results.offsets.assign(1, 0);
  results.counts.assign(n, 0);
  tbb::enumerable_thread_specific<Scratch> scratch;
  tbb::enumerable_thread_specific<std::vector<DocId>> counted;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4), [&](const tbb::blocked_range<std::size_t>& range) {
    Scratch& s = scratch.local();
    for (std::size_t q = range.begin(); q != range.end(); ++q) {
      terms_by_length(index, queries.query(q), s.terms);
      s.lists.clear();
      s.aux.clear();
      for (const std::uint32_t t : s.terms) {
        s.lists.push_back(list_of(index, t));
        detail::ListAux aux;
        if (algorithm == Algorithm::automatic && t != kNoTerm) {
          aux.bits = index.bitmap(t);
          aux.base = static_cast<DocId>(index.first_document);
        }
        if (const auto it = prepared.slot.find(t); it != prepared.slot.end()) {
          if (!prepared.directories.empty()) aux.directory = &prepared.directories[it->second];
          if (!prepared.bitmaps.empty()) aux.bitmap = prepared.bitmaps[it->second].get();
        }
        s.aux.push_back(aux);
      }
      std::vector<DocId>& out = count_only ? counted.local() : answers[q];
      if (s.lists[0].empty()) out.clear();  // a word the index lacks, or an empty list
      else detail::intersect(s.lists, s.aux, algorithm, out, s.spare);
      results.counts[q] = out.size();
    }
    if (progress) progress->advance(range.size());
  });
  phases.mark("queries");
  for (std::size_t q = 0; q < n; ++q) results.offsets.push_back(results.offsets.back() + (count_only ? 0 : results.counts[q]));
  if (!count_only) {
    results.ids.resize(results.offsets.back());
    phases.mark("allocate");
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 16), [&](const tbb::blocked_range<std::size_t>& range) {
      for (std::size_t q = range.begin(); q != range.end(); ++q)
        std::copy(answers[q].begin(), answers[q].end(),
                  results.ids.begin() + static_cast<std::ptrdiff_t>(results.offsets[q]));
    });
    phases.mark("gather");
  }
}

}  // namespace

void intersect_cpu(const Index& index, const Queries& queries, Algorithm algorithm, Results& results,
                   bool count_only, Progress* progress) {
  try {
    answer_batch(index, queries, algorithm, results, count_only, progress);
  } catch (...) {
    results = Results();  // never half a batch
    throw;
  }
}

}  // namespace simkit::postings
