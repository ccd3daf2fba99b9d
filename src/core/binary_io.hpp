// Pieces shared by simkit's own binary formats (.skv, .skp): unaligned little-endian
// loads and a writer that hashes what it writes for the XXH3 trailer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <xxhash.h>

#include "simkit/error.hpp"
#include "simkit/io.hpp"

namespace simkit::detail {

template <typename T>
T load(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

inline std::uint64_t align64(std::uint64_t n) { return (n + 63) / 64 * 64; }

// Hashes everything written so far, so the trailer needs no second pass over the file.
struct HashingWriter {
  OutputFile& out;
  XXH3_state_t* state = XXH3_createState();
  std::uint64_t written = 0;
  explicit HashingWriter(OutputFile& o) : out(o) {
    if (state == nullptr) throw Failure("out of memory");
    XXH3_64bits_reset(state);
  }
  ~HashingWriter() { XXH3_freeState(state); }
  HashingWriter(const HashingWriter&) = delete;
  HashingWriter& operator=(const HashingWriter&) = delete;
  void write(const void* data, std::size_t bytes) {
    const std::string_view view(static_cast<const char*>(data), bytes);
    XXH3_64bits_update(state, view.data(), view.size());
    out.write(view);
    written += bytes;
  }
  void pad_to(std::uint64_t offset) {
    static const char zeros[64] = {};
    while (written < offset) write(zeros, std::min<std::uint64_t>(64, offset - written));
  }
  // Writes the checksum of every byte so far (not itself hashed).
  void finish() {
    const std::uint64_t sum = XXH3_64bits_digest(state);
    out.write(std::string_view(reinterpret_cast<const char*>(&sum), sizeof sum));
  }
};

}  // namespace simkit::detail
