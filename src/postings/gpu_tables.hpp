// Internal: the tables a batch of queries sends to the GPU (cuda/intersect.cu), built on
// all cores: each query's lists shortest first, its candidates, and the slices of
// candidates that the kernel's blocks take.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simkit/postings.hpp"

namespace simkit::postings::detail {

inline constexpr std::uint64_t kNoBitmap = ~std::uint64_t{0};

struct GpuSlice {
  std::uint32_t query;  // part query
  std::uint32_t start;  // first candidate's position in the query's shortest list
};

// One entry a term of a query (a repeated term twice: ANDing a list with itself changes
// nothing), a query's entries together, shortest list first. Not resident, each distinct
// term's list is gathered once and its entries point there.
struct GpuTables {
  std::vector<std::uint32_t> entry_term;    // (on the host only)
  std::vector<std::uint64_t> entry_start;   // where its ids begin: in index.ids, or in the gathered lists
  std::vector<std::uint64_t> entry_bitmap;  // where its bitmap begins in index.bitmap_words, or kNoBitmap
  std::vector<std::uint32_t> entry_length;
  std::vector<std::uint32_t> query_first;      // part query p's entries: [query_first[p], query_first[p + 1])
  std::vector<std::uint64_t> candidate_first;  // part query p's candidates start here
  std::vector<std::uint32_t> part_query;       // part query p is batch query part_query[p]
  std::vector<GpuSlice> slices;
  std::vector<std::uint32_t> gather_terms;  // not resident: the distinct terms whose lists are gathered, in order
  std::vector<std::uint64_t> gather_start;  // ... where each one's ids go
  std::uint64_t gathered = 0;                // ... and their ids
};

// Fills `tables` for queries [begin, end) of the batch; queries whose shortest list is
// empty are left out (their answer is empty). `resident`: the lists are read in place
// (and their bitmaps used); otherwise the distinct terms' lists have places in the
// gathered lists, which gather_lists fills.
void build_gpu_tables(const Index& index, const Queries& queries, std::size_t begin, std::size_t end, bool resident,
                      std::uint32_t slice, GpuTables& tables);
void gather_lists(const Index& index, const GpuTables& tables, DocId* into);

// Query q's shortest list (ids a GPU tests) and all its lists' ids (at least what it
// gathers when the index is not resident).
std::uint64_t shortest_list(const Index& index, std::span<const std::uint32_t> query);
std::uint64_t listed_ids(const Index& index, std::span<const std::uint32_t> query);

}  // namespace simkit::postings::detail
