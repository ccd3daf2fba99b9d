// Random indexes and query batches for the postings tests (CPU and GPU), and the plain
// reference every algorithm must equal: std::set_intersection folded over the lists.
#pragma once

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

#include "simkit/postings.hpp"
#include "test_support.hpp"

namespace simkit::test {

// `count` sorted, distinct ids below `documents`.
inline std::vector<postings::DocId> random_list(Random& random, std::size_t count, std::uint32_t documents) {
  std::set<postings::DocId> ids;
  count = std::min<std::size_t>(count, documents);
  std::uniform_int_distribution<std::uint32_t> id(0, documents - 1);
  while (ids.size() < count) ids.insert(id(random.engine()));
  return {ids.begin(), ids.end()};
}

inline std::vector<postings::DocId> reference_intersection(const std::vector<std::vector<postings::DocId>>& lists) {
  std::vector<postings::DocId> result = lists.at(0);
  for (std::size_t i = 1; i < lists.size(); ++i) {
    std::vector<postings::DocId> next;
    std::set_intersection(result.begin(), result.end(), lists[i].begin(), lists[i].end(), std::back_inserter(next));
    result.swap(next);
  }
  return result;
}

// An index of lists in every shape the algorithms branch on: empty, single ids, dense
// and sparse, long and short, with ids near 0 and near `documents`.
inline postings::Index random_index(Random& random, std::size_t terms, std::uint32_t documents) {
  postings::Index index;
  index.documents = documents;
  for (std::size_t t = 0; t < terms; ++t) {
    const int shape = random.integer(0, 9);
    const std::size_t count = shape == 0   ? 0
                              : shape == 1 ? 1
                              : shape <= 4 ? random.integer(2, 40)
                              : shape <= 7 ? random.integer(41, 3000)
                                           : random.integer(3000, static_cast<int>(std::min<std::uint32_t>(documents, 60000)));
    const auto list = random_list(random, count, documents);
    index.ids.insert(index.ids.end(), list.begin(), list.end());
    index.offsets.push_back(index.ids.size());
  }
  postings::add_bitmaps(index);  // as every index simkit builds or reads has them
  return index;
}

// Queries of 1..5 terms; some repeat a term, some pair a list with itself or near copies.
inline postings::Queries random_queries(Random& random, const postings::Index& index, std::size_t count) {
  postings::Queries queries;
  const int last = static_cast<int>(index.terms()) - 1;
  for (std::size_t q = 0; q < count; ++q) {
    const int k = random.integer(1, 5);
    for (int i = 0; i < k; ++i) {
      const bool repeat = i > 0 && random.integer(0, 9) == 0;
      queries.terms.push_back(repeat ? queries.terms.back() : static_cast<std::uint32_t>(random.integer(0, last)));
    }
    queries.offsets.push_back(queries.terms.size());
  }
  return queries;
}

// The reference answers of a batch, as Results.
inline postings::Results reference_results(const postings::Index& index, const postings::Queries& queries) {
  postings::Results r;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    std::vector<std::vector<postings::DocId>> lists;
    for (const std::uint32_t t : queries.query(q)) lists.emplace_back(index.list(t).begin(), index.list(t).end());
    const auto answer = reference_intersection(lists);
    r.ids.insert(r.ids.end(), answer.begin(), answer.end());
    r.offsets.push_back(r.ids.size());
    r.counts.push_back(answer.size());
  }
  return r;
}

// The sample index built from real text (data/samples/postings) and real-shaped queries.
inline std::filesystem::path sample_corpus() { return source_dir() / "data/samples/postings/brown-sample.txt"; }
inline std::filesystem::path sample_queries() { return source_dir() / "data/samples/postings/queries.txt"; }

}  // namespace simkit::test
