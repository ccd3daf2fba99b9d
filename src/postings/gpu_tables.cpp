// The GPU's tables of a batch (postings/gpu_tables.hpp): one pass over the queries.
#include "postings/gpu_tables.hpp"

#include <algorithm>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "postings/lists.hpp"

namespace simkit::postings::detail {

std::uint64_t shortest_list(const Index& index, std::span<const std::uint32_t> query) {
  std::uint64_t shortest = ~std::uint64_t{0};
  for (const std::uint32_t t : query) shortest = std::min<std::uint64_t>(shortest, list_of(index, t).size());
  return shortest;
}

std::uint64_t listed_ids(const Index& index, std::span<const std::uint32_t> query) {
  std::uint64_t ids = 0;
  for (const std::uint32_t t : query) ids += list_of(index, t).size();
  return ids;
}

std::vector<GpuList> resident_lists(const Index& index) {
  std::vector<GpuList> lists(index.terms());
  tbb::parallel_for(std::size_t{0}, lists.size(), [&](std::size_t t) {
    const std::uint64_t* bits = index.bitmap(t);
    lists[t] = {index.offsets[t], bits != nullptr ? static_cast<std::uint64_t>(bits - index.bitmap_words.data()) : kNoBitmap,
                static_cast<std::uint32_t>(index.offsets[t + 1] - index.offsets[t])};
  });
  return lists;
}

void build_gpu_tables(const Index& index, const Queries& queries, std::size_t begin, std::size_t end,
                      const std::vector<GpuList>* resident, std::uint32_t slice, GpuTables& t) {
  t.terms.clear();
  t.part_query.clear();
  t.slices.clear();
  t.query_first.assign(1, 0);
  t.candidate_first.assign(1, 0);
  const auto length = [&](std::uint32_t term) { return index.offsets[term + 1] - index.offsets[term]; };
  for (std::size_t q = begin; q < end; ++q) {
    const std::span<const std::uint32_t> query = queries.query(q);
    const std::uint64_t shortest = shortest_list(index, query);  // 0 for a word the index lacks
    if (shortest == 0) continue;
    const auto first = static_cast<std::ptrdiff_t>(t.terms.size());
    t.terms.insert(t.terms.end(), query.begin(), query.end());
    std::sort(t.terms.begin() + first, t.terms.end(), [&](std::uint32_t a, std::uint32_t b) {
      const std::uint64_t la = length(a), lb = length(b);
      return la != lb ? la < lb : a < b;
    });
    const auto p = static_cast<std::uint32_t>(t.part_query.size());
    for (std::uint64_t start = 0; start < shortest; start += slice) t.slices.push_back({p, static_cast<std::uint32_t>(start)});
    t.part_query.push_back(static_cast<std::uint32_t>(q));
    t.query_first.push_back(static_cast<std::uint32_t>(t.terms.size()));
    t.candidate_first.push_back(t.candidate_first.back() + shortest);
  }
  t.entries.resize(t.terms.size());
  t.gathered = 0;
  t.gather_terms.clear();
  t.gather_start.clear();
  if (resident != nullptr) {
    for (std::size_t e = 0; e < t.terms.size(); ++e) t.entries[e] = (*resident)[t.terms[e]];
    return;
  }
  // Not resident: each distinct term's list gathered once, its entries pointing there.
  std::unordered_map<std::uint32_t, std::uint64_t> at;
  for (std::size_t e = 0; e < t.terms.size(); ++e) {
    const std::uint32_t term = t.terms[e];
    const auto n = static_cast<std::uint32_t>(length(term));
    const auto [it, fresh] = at.emplace(term, t.gathered);
    if (fresh) {
      t.gather_terms.push_back(term);
      t.gather_start.push_back(t.gathered);
      t.gathered += n;
    }
    t.entries[e] = {it->second, kNoBitmap, n};
  }
}

void gather_lists(const Index& index, const GpuTables& t, DocId* into) {
  tbb::parallel_for(std::size_t{0}, t.gather_terms.size(), [&](std::size_t g) {
    const std::span<const DocId> list = index.list(t.gather_terms[g]);
    std::copy(list.begin(), list.end(), into + t.gather_start[g]);
  });
}

}  // namespace simkit::postings::detail
