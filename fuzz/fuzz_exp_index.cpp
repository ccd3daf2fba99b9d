// libFuzzer target: the seed's ExpIndex reader (simkit postings query --exp-index). Bad
// bytes must end in InputError; an accepted index's lists must be strictly increasing,
// and every CPU algorithm must give the same answer as the plain merge on queries made
// of its lists.
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "fuzz_common.hpp"
#include "simkit/postings.hpp"

namespace postings = simkit::postings;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const postings::Index index = postings::parse_exp_index(simkit::fuzz::as_text(data, size), "fuzz");
    for (std::size_t t = 0; t < index.terms(); ++t) {
      const auto list = index.list(t);
      if (std::adjacent_find(list.begin(), list.end(), [](auto a, auto b) { return a >= b; }) != list.end()) std::abort();
      if (!list.empty() && list.back() >= index.documents) std::abort();
    }
    // Queries of 1..4 consecutive lists.
    for (std::size_t first = 0; first < index.terms() && first < 16; ++first) {
      std::vector<std::span<const postings::DocId>> lists;
      for (std::size_t t = first; t < index.terms() && lists.size() < 1 + first % 4; ++t) lists.push_back(index.list(t));
      std::vector<postings::DocId> want(lists[0].begin(), lists[0].end());
      for (std::size_t i = 1; i < lists.size(); ++i) {
        std::vector<postings::DocId> next;
        std::set_intersection(want.begin(), want.end(), lists[i].begin(), lists[i].end(), std::back_inserter(next));
        want.swap(next);
      }
      for (const auto a : {postings::Algorithm::svs, postings::Algorithm::adaptive, postings::Algorithm::hash,
                           postings::Algorithm::galloping, postings::Algorithm::simd, postings::Algorithm::bitmap}) {
        std::vector<postings::DocId> got;
        postings::intersect_lists(lists, a, got);
        if (got != want) std::abort();
      }
    }
  });
}
