// Line-by-line reading of text in memory, shared by the text parsers.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "simkit/error.hpp"

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

// A piece of a text that ends at a line's end, for parsing pieces in parallel: its bytes
// [begin, end), its lines (as for_each_line counts them) and the number of its first line
// in the whole text (from 1).
struct LineChunk {
  std::size_t begin = 0, end = 0;
  std::uint64_t lines = 0, first_line = 1;
  std::string_view of(std::string_view text) const { return text.substr(begin, end - begin); }
};

// `text` cut into pieces of about `bytes` at line ends, their lines counted on all cores.
std::vector<LineChunk> line_chunks(std::string_view text, std::size_t bytes);

// The error of the earliest line among those that parsers working in parallel offer, so
// that the message does not depend on timing.
struct FirstError {
  std::mutex mutex;
  std::optional<InputError> error;
  void offer(const InputError& e) {
    std::lock_guard lock(mutex);
    if (!error || e.where().line < error->where().line) error = e;
  }
  void throw_if_any() const {
    if (error) throw *error;
  }
};

}  // namespace simkit
