// libFuzzer target: Wikipedia XML dumps (text/line_source.hpp) and the wikitext rules
// (text/wikitext.hpp). The input is read as a dump: bad XML must end in InputError,
// accepted dumps must give whole lines and the same text a second time. It is also
// taken as an article's wikitext: lines never empty, never padded with blanks.
#include <cstdlib>
#include <string>

#include "text/line_source.hpp"
#include "text/wikitext.hpp"
#include "fuzz_common.hpp"
#include "simkit/io.hpp"

namespace {

std::string read_dump(const std::string& path) {
  const auto source = simkit::open_lines(path, simkit::TextFormat::wikipedia);
  std::string all, piece;
  while (source->next(piece, 256)) {
    if (piece.empty() || piece.back() != '\n') std::abort();
    all += piece;
  }
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = simkit::fuzz::as_text(data, size);
  const std::string plain = simkit::wikitext_to_text(text);
  for (std::size_t at = 0; at < plain.size();) {
    const std::size_t end = plain.find('\n', at);
    if (end == std::string::npos || end == at || plain[at] == ' ' || plain[end - 1] == ' ') std::abort();
    at = end + 1;
  }
  const simkit::fuzz::ScratchFile file("dump.xml");
  simkit::write_file_atomically(file.path, text);
  return simkit::fuzz::guarded([&] {
    const std::string once = read_dump(file.path);
    if (read_dump(file.path) != once) std::abort();
  });
}
