// Line-by-line reading of text in memory, shared by the text parsers.
#pragma once

#include <cstdint>
#include <string_view>

namespace simkit {

// Calls body(line, number) for each line of `text`: number counts from 1, the line
// excludes its '\n' (a '\r' before it stays: callers decide), and a last line without a
// newline counts too. A text ending in '\n' has no empty line after it.
template <typename Body>
void for_each_line(std::string_view text, Body&& body) {
  std::uint64_t number = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    body(text.substr(at, end - at), ++number);
    at = end + 1;
  }
}

}  // namespace simkit
