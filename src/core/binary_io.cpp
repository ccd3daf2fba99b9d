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

}  // namespace simkit::detail
