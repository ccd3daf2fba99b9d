// Internal: a query's lists, shared by the CPU and GPU paths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "simkit/postings.hpp"

namespace simkit::postings {

// A query word the vocabulary lacks: its list is empty.
inline constexpr std::uint32_t kNoTerm = ~std::uint32_t{0};

inline std::span<const DocId> list_of(const Index& index, std::uint32_t term) noexcept {
  return term == kNoTerm ? std::span<const DocId>{} : index.list(term);
}

// Query q's terms ordered shortest list first (ties by term id, so the order is fixed).
inline void terms_by_length(const Index& index, std::span<const std::uint32_t> query,
                            std::vector<std::uint32_t>& terms) {
  terms.assign(query.begin(), query.end());
  std::sort(terms.begin(), terms.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::size_t la = list_of(index, a).size(), lb = list_of(index, b).size();
    return la != lb ? la < lb : a < b;
  });
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
}

// Copies n ids in parallel blocks (answers of a batch, out of pinned memory).
void copy_ids(const DocId* from, std::size_t n, DocId* to);

}  // namespace simkit::postings
