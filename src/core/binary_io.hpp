// Pieces shared by simkit's own binary formats (.skv, .skp, .skd, .skq, .skl): unaligned
// little-endian loads, a writer that hashes what it writes for the trailing checksum, and
// the check of that checksum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

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

// A checksum in pieces (.skv from version 2, .skp from 3, .skd from 4): the XXH3-64 of the little-endian XXH3-64s
// of consecutive `piece`-byte pieces (the last shorter; an empty file one empty piece).
// One XXH3 pass is sequential, about 6 GB/s: 14 s for an 84 GB model before its first
// answer; pieces are checked on every core.
inline constexpr std::uint64_t kChecksumPiece = std::uint64_t{64} << 20;
std::uint64_t piece_checksum(const char* bytes, std::uint64_t size, std::uint64_t piece = kChecksumPiece);

// Refuses (InputError at `at`) a file whose checksum, stored at `at`, is not that of the
// bytes before it: piece_checksum's (`in_pieces`) or one XXH3-64 of them (older versions).
void check_checksum(const char* base, std::uint64_t at, bool in_pieces, const std::string& path);

// Hashes everything written so far, so the trailer needs no second pass over the file:
// one XXH3-64 of every byte (piece 0) or piece_checksum's sum.
struct HashingWriter {
  OutputFile& out;
  std::uint64_t piece;
  XXH3_state_t* state = XXH3_createState();
  std::uint64_t written = 0, in_piece = 0;
  std::vector<std::uint64_t> pieces;  // the finished pieces' hashes
  explicit HashingWriter(OutputFile& o, std::uint64_t piece_bytes = 0) : out(o), piece(piece_bytes) {
    if (state == nullptr) throw Failure("out of memory");
    XXH3_64bits_reset(state);
  }
  ~HashingWriter() { XXH3_freeState(state); }
  HashingWriter(const HashingWriter&) = delete;
  HashingWriter& operator=(const HashingWriter&) = delete;
  void write(const void* data, std::size_t bytes) {
    const std::string_view view(static_cast<const char*>(data), bytes);
    out.write(view);
    written += bytes;
    for (std::size_t at = 0; at < view.size();) {
      const std::size_t n = piece == 0 ? view.size() : std::min<std::uint64_t>(view.size() - at, piece - in_piece);
      XXH3_64bits_update(state, view.data() + at, n);
      at += n;
      in_piece += n;
      if (in_piece == piece) next_piece();
    }
  }
  void pad_to(std::uint64_t offset) {
    static const char zeros[64] = {};
    while (written < offset) write(zeros, std::min<std::uint64_t>(64, offset - written));
  }
  // Writes the checksum of every byte so far (not itself hashed).
  void finish() {
    std::uint64_t sum = 0;
    if (piece == 0) {
      sum = XXH3_64bits_digest(state);
    } else {
      if (in_piece > 0 || pieces.empty()) next_piece();
      sum = XXH3_64bits(pieces.data(), pieces.size() * sizeof(std::uint64_t));
    }
    out.write(std::string_view(reinterpret_cast<const char*>(&sum), sizeof sum));
  }

 private:
  void next_piece() {
    pieces.push_back(XXH3_64bits_digest(state));
    XXH3_64bits_reset(state);
    in_piece = 0;
  }
};

}  // namespace simkit::detail
