// The dense lists' bitmaps kept in an index (simkit/postings.hpp): one bit a document of
// the index's range, so that a candidate is tested against a long list with one load.
#include <algorithm>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "postings/algorithms.hpp"
#include "simkit/error.hpp"
#include "simkit/postings.hpp"

namespace simkit::postings {

const std::uint64_t* Index::bitmap(std::size_t term) const noexcept {
  // Only dense lists get bitmaps (add_bitmaps): most terms are answered without a search.
  // (A bitmap kept of a list that is not dense is left unused; the list is searched.)
  if (!detail::dense(list(term).size(), documents - first_document)) return nullptr;
  if (bitmap_words.size() != bitmap_terms.size() * bitmap_stride()) return nullptr;  // (documents changed since)
  const auto it = std::lower_bound(bitmap_terms.begin(), bitmap_terms.end(), term);
  if (it == bitmap_terms.end() || *it != term) return nullptr;
  return bitmap_words.data() + static_cast<std::size_t>(it - bitmap_terms.begin()) * bitmap_stride();
}

void add_bitmaps(Index& index) {
  if (index.documents < index.first_document) throw Failure("add_bitmaps: the index's documents end before they begin");
  const std::uint64_t documents = index.documents - index.first_document;
  std::vector<std::uint32_t> terms;
  for (std::size_t t = 0; t < index.terms(); ++t)
    if (detail::dense(index.list(t).size(), documents)) terms.push_back(static_cast<std::uint32_t>(t));
  const std::size_t stride = index.bitmap_stride();
  std::vector<std::uint64_t> words(terms.size() * stride, 0);
  tbb::parallel_for(std::size_t{0}, terms.size(), [&](std::size_t i) {
    std::uint64_t* bits = words.data() + i * stride;
    for (const DocId d : index.list(terms[i])) {
      if (d < index.first_document || d >= index.documents)
        throw Failure(fmt::format("add_bitmaps: list {} holds id {}, outside the index's documents [{}, {})", terms[i],
                                  d, index.first_document, index.documents));
      detail::set_bit(bits, d - index.first_document);
    }
  });
  index.bitmap_terms = std::move(terms);  // (only once every list fitted: a throw leaves the index as it was)
  index.bitmap_words = std::move(words);
}

}  // namespace simkit::postings
