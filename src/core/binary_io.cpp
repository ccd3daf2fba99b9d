#include "core/binary_io.hpp"

#include <tbb/parallel_for.h>

namespace simkit::detail {

std::uint64_t piece_checksum(const char* bytes, std::uint64_t size, std::uint64_t piece) {
  const std::uint64_t count = std::max<std::uint64_t>(1, (size + piece - 1) / piece);
  std::vector<std::uint64_t> pieces(count);
  tbb::parallel_for(std::uint64_t{0}, count, [&](std::uint64_t i) {
    const std::uint64_t at = i * piece;
    pieces[i] = XXH3_64bits(bytes + at, std::min(piece, size - at));
  });
  return XXH3_64bits(pieces.data(), pieces.size() * sizeof(std::uint64_t));
}

void check_checksum(const char* base, std::uint64_t at, bool in_pieces, const std::string& path) {
  const std::uint64_t sum = in_pieces ? piece_checksum(base, at) : XXH3_64bits(base, at);
  if (sum != load<std::uint64_t>(base + at))
    throw InputError(Location::at_offset(path, at),
                     "checksum mismatch: the file is damaged or was changed after it was written");
}

}  // namespace simkit::detail
