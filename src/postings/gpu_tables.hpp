// Internal: the tables a batch of queries sends to the GPU (cuda/intersect.cu): each
// query's lists shortest first, its candidates, and the slices of candidates that the
// kernel's blocks take. Built on one core: a batch's tables are small (Brown's 1,000
// queries: about 0.05 ms, bench/probes/postings_tables.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simkit/postings.hpp"

namespace simkit::postings::detail {

inline constexpr std::uint64_t kNoBitmap = ~std::uint64_t{0};

// A list as the kernels read it: where its ids begin (in index.ids, or in a batch's
// gathered lists), where its bitmap begins in index.bitmap_words (or kNoBitmap), its length.
struct GpuList {
  std::uint64_t start;
  std::uint64_t bitmap;
  std::uint32_t length;
  std::uint32_t unused = 0;
};

// The list table of an index resident on the GPU: row t is term t's list (made once).
std::vector<GpuList> resident_lists(const Index& index);

struct GpuSlice {
  std::uint32_t query;  // part query
  std::uint32_t start;  // first candidate's position in the query's shortest list
};

// One entry a term of a query (a repeated term twice: ANDing a list with itself changes
// nothing), a query's entries together, shortest list first, each its list as the kernels
// read it: resident, a row of resident_lists; not resident, each distinct term's list is
// gathered once and its entries point there.
struct GpuTables {
  std::vector<GpuList> entries;
  std::vector<std::uint32_t> query_first;      // part query p's entries: [query_first[p], query_first[p + 1])
  std::vector<std::uint64_t> candidate_first;  // part query p's candidates start here
  std::vector<std::uint32_t> part_query;       // part query p is batch query part_query[p]
  std::vector<GpuSlice> slices;                // a block's candidates
  std::vector<std::uint32_t> terms;            // (the entries' terms, in order)
  std::vector<std::uint32_t> gather_terms;     // not resident: the distinct terms whose lists are gathered, in order
  std::vector<std::uint64_t> gather_start;     // ... where each one's ids go in the gathered lists
  std::uint64_t gathered = 0;                  // ... and their ids
};

// Fills `tables` for queries [begin, end) of the batch, blocks of `slice` candidates;
// queries whose shortest list is empty are left out (their answer is empty). `resident`:
// the index's list table (the lists are read in place); null, the lists are gathered.
void build_gpu_tables(const Index& index, const Queries& queries, std::size_t begin, std::size_t end,
                      const std::vector<GpuList>* resident, std::uint32_t slice, GpuTables& tables);
void gather_lists(const Index& index, const GpuTables& tables, DocId* into);

// Query q's shortest list (ids a GPU tests) and all its lists' ids (at least what it
// gathers when the index is not resident).
std::uint64_t shortest_list(const Index& index, std::span<const std::uint32_t> query);
std::uint64_t listed_ids(const Index& index, std::span<const std::uint32_t> query);

}  // namespace simkit::postings::detail
