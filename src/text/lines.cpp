// line_chunks (text/lines.hpp): the cuts found on one core, the lines counted on all.
#include "text/lines.hpp"

#include <algorithm>
#include <cstring>

#include <oneapi/tbb/parallel_for.h>

namespace simkit {

namespace {

std::uint64_t count_lines(std::string_view piece) {
  std::uint64_t lines = 0;
  const char* p = piece.data();
  const char* end = p + piece.size();
  while (p < end) {
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    ++lines;
    if (nl == nullptr) break;
    p = static_cast<const char*>(nl) + 1;
  }
  return lines;
}

}  // namespace

std::vector<LineChunk> line_chunks(std::string_view text, std::size_t bytes) {
  std::vector<LineChunk> chunks;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = std::min(text.size(), begin + std::max<std::size_t>(bytes, 1));
    if (end < text.size()) {
      const std::size_t nl = text.find('\n', end - 1);
      end = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    chunks.push_back(LineChunk{.begin = begin, .end = end});
    begin = end;
  }
  tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t i) { chunks[i].lines = count_lines(chunks[i].of(text)); });
  std::uint64_t before = 0;
  for (LineChunk& c : chunks) {
    c.first_line = before + 1;
    before += c.lines;
  }
  return chunks;
}

}  // namespace simkit
