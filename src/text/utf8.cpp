#include "text/utf8.hpp"

#include <string>

namespace simkit {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto byte = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3;
  else if (c >= 0xF0 && c <= 0xF4) n = 4;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t j = 1; j < n; ++j)
    if ((byte(i + j) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;   // overlong
  if (c == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && byte(i + 1) < 0x90) return 0;   // overlong
  if (c == 0xF4 && byte(i + 1) >= 0x90) return 0;  // past U+10FFFF
  return n;
}

std::size_t first_invalid_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace simkit
