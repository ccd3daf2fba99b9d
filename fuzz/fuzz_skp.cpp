// libFuzzer target: simkit's .skp index reader (simkit postings query --index). The
// checksum is not checked in fuzzing builds, so the structure checks behind it are
// reached; an accepted index must write and read back the same.
#include <cstdlib>
#include <string>

#include "fuzz_common.hpp"
#include "simkit/postings.hpp"

namespace postings = simkit::postings;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const postings::Index index = postings::parse_index(simkit::fuzz::as_text(data, size), "fuzz");
    if (index.ids.size() > 100000) return;
    const simkit::fuzz::ScratchFile file("skp");
    postings::write_index(index, file.path);
    const postings::Index back = postings::read_index(file.path);
    if (back.ids != index.ids || back.offsets != index.offsets || back.vocabulary != index.vocabulary ||
        back.documents != index.documents || back.bitmap_terms != index.bitmap_terms ||
        back.bitmap_words != index.bitmap_words)
      std::abort();
    for (std::size_t t = 0; t < index.vocabulary.size(); ++t)
      if (index.find(index.vocabulary[t]) != static_cast<std::int64_t>(t)) std::abort();
  });
}
