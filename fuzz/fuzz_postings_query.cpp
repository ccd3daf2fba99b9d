// libFuzzer target: query files (simkit postings query --queries), as term ids (the
// seed's ExpQuery) and as words, against a small fixed index. Bad text must end in
// InputError; every accepted query names terms of the index (or none, for unknown words).
#include <cstdlib>

#include "fuzz_common.hpp"
#include "simkit/postings.hpp"

namespace postings = simkit::postings;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const postings::Index index = [] {
    postings::Index i;
    i.ids = {0, 2, 4, 1, 2, 3, 4, 2, 4};
    i.offsets = {0, 3, 3, 7, 8, 9};
    i.vocabulary = {"alpha", "beta", "café", "delta", "日本"};
    i.documents = 5;
    return i;
  }();
  if (size == 0) return 0;
  const bool words = data[0] & 1;
  return simkit::fuzz::guarded([&] {
    const postings::Queries q = postings::parse_queries(simkit::fuzz::as_text(data + 1, size - 1), "fuzz", index, words);
    for (std::size_t i = 0; i < q.size(); ++i) {
      if (q.query(i).empty()) std::abort();
      for (const std::uint32_t t : q.query(i))
        if (t >= index.terms() && !(words && t == ~std::uint32_t{0})) std::abort();
    }
    const postings::Results r = postings::intersect_cpu(index, q, postings::Algorithm::automatic);
    if (r.counts.size() != q.size()) std::abort();
  });
}
