// Section offsets of an .skv file, all derived from its sizes (see format_skv.cpp).
#pragma once

#include <cstdint>

namespace simkit::neighbors::detail {

// Version 2 (written): the checksum in pieces (detail::piece_checksum); version 1 (read):
// one XXH3-64 of every byte.
inline constexpr std::uint32_t kSkvVersion = 2;
inline constexpr std::uint32_t kSkvHeaderBytes = 128;

struct SkvLayout {
  std::uint64_t vectors = 0;
  std::uint64_t norms = 0;
  std::uint64_t offsets = 0;
  std::uint64_t words = 0;
  std::uint64_t sorted = 0;
  std::uint64_t checksum = 0;
  std::uint64_t file_size = 0;
};

SkvLayout skv_layout(std::uint64_t rows, std::uint64_t dim, std::uint64_t word_bytes);

}  // namespace simkit::neighbors::detail
