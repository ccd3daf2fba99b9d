// simkit's binary files (.skv, .skp, .skd) made valid again after a test changed them:
// the version field (a u32 at byte 8) set, and the trailing checksum recomputed by the
// rule of that version (pieces, or one XXH3-64 pass), so that the reader's later checks
// are the ones a test reaches.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include <xxhash.h>

#include "core/binary_io.hpp"

namespace simkit::test {

inline std::string sealed(std::string bytes, bool in_pieces) {
  const std::size_t at = bytes.size() - 8;
  const std::uint64_t sum = in_pieces ? detail::piece_checksum(bytes.data(), at) : XXH3_64bits(bytes.data(), at);
  std::memcpy(bytes.data() + at, &sum, 8);
  return bytes;
}

inline std::string with_version(std::string bytes, std::uint32_t version, bool in_pieces) {
  std::memcpy(bytes.data() + 8, &version, 4);
  return sealed(std::move(bytes), in_pieces);
}

}  // namespace simkit::test
