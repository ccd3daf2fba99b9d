// UTF-8 validation for words and tokens read from untrusted files.
#pragma once

#include <cstddef>
#include <string_view>

namespace simkit {

// Length of the valid UTF-8 sequence that starts at text[i] (1 for ASCII), or 0 when
// the bytes there are not valid UTF-8 (overlong forms and surrogates included).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) noexcept;

// Offset of the first byte that is not part of valid UTF-8, or npos.
std::size_t first_invalid_utf8(std::string_view text) noexcept;

}  // namespace simkit
