// The GPU's tables of a batch (postings/gpu_tables.hpp): offsets counted in one light
// pass, then each query's entries and slices written in parallel.
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

void build_gpu_tables(const Index& index, const Queries& queries, std::size_t begin, std::size_t end, bool resident,
                      std::uint32_t slice, GpuTables& t) {
  t.part_query.clear();
  t.query_first.assign(1, 0);
  t.candidate_first.assign(1, 0);
  std::vector<std::uint64_t> slice_first{0};
  for (std::size_t q = begin; q < end; ++q) {
    const std::span<const std::uint32_t> query = queries.query(q);
    const std::uint64_t shortest = shortest_list(index, query);
    if (shortest == 0) continue;
    t.part_query.push_back(static_cast<std::uint32_t>(q));
    t.query_first.push_back(t.query_first.back() + static_cast<std::uint32_t>(query.size()));
    t.candidate_first.push_back(t.candidate_first.back() + shortest);
    slice_first.push_back(slice_first.back() + (shortest + slice - 1) / slice);
  }
  const std::size_t entries = t.query_first.back();
  t.entry_term.resize(entries);
  t.entry_start.resize(entries);
  t.entry_bitmap.resize(entries);
  t.entry_length.resize(entries);
  t.slices.resize(slice_first.back());
  tbb::parallel_for(std::size_t{0}, t.part_query.size(), [&](std::size_t p) {
    const std::span<const std::uint32_t> query = queries.query(t.part_query[p]);
    std::uint32_t* sorted = t.entry_term.data() + t.query_first[p];
    std::copy(query.begin(), query.end(), sorted);
    std::sort(sorted, sorted + query.size(), [&](std::uint32_t a, std::uint32_t b) {
      const std::size_t la = index.list(a).size(), lb = index.list(b).size();
      return la != lb ? la < lb : a < b;
    });
    for (std::size_t j = 0; j < query.size(); ++j) {
      const std::uint32_t term = sorted[j];
      const std::size_t e = t.query_first[p] + j;
      const std::uint64_t* bits = resident ? index.bitmap(term) : nullptr;
      t.entry_start[e] = index.offsets[term];  // (not resident: replaced below)
      t.entry_bitmap[e] = bits != nullptr ? static_cast<std::uint64_t>(bits - index.bitmap_words.data()) : kNoBitmap;
      t.entry_length[e] = static_cast<std::uint32_t>(index.list(term).size());
    }
    const std::uint64_t shortest = t.candidate_first[p + 1] - t.candidate_first[p];
    for (std::uint64_t s = slice_first[p], first = 0; first < shortest; ++s, first += slice)
      t.slices[s] = {static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(first)};
  });
  // Not resident: each distinct term's list gathered once, its entries pointing there.
  t.gathered = 0;
  t.gather_terms.clear();
  t.gather_start.clear();
  if (!resident) {
    std::unordered_map<std::uint32_t, std::uint64_t> at;
    for (std::size_t e = 0; e < entries; ++e) {
      const auto [it, fresh] = at.emplace(t.entry_term[e], t.gathered);
      if (fresh) {
        t.gather_terms.push_back(t.entry_term[e]);
        t.gather_start.push_back(t.gathered);
        t.gathered += t.entry_length[e];
      }
      t.entry_start[e] = it->second;
    }
  }
}

void gather_lists(const Index& index, const GpuTables& t, DocId* into) {
  tbb::parallel_for(std::size_t{0}, t.gather_terms.size(), [&](std::size_t g) {
    const std::span<const DocId> list = index.list(t.gather_terms[g]);
    std::copy(list.begin(), list.end(), into + t.gather_start[g]);
  });
}

}  // namespace simkit::postings::detail
