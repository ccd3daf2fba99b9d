// libfuzzy's score of two signature parts from their weighted edit distance, shared by the
// CPU scorer and the GPU kernels (constexpr, so that device code calls this very function).
#pragma once

#include <cstdint>

namespace simkit::ctph::detail {

// `distance`: the edit distance of parts of lengths la and lb (1 <= la, lb <= 64) with
// insertions and deletions costing 1 and substitutions 2. Scaled to 0..100, and for block
// sizes too small to vouch for a high score, capped by what the shorter part covers.
constexpr std::uint32_t part_score(std::uint64_t distance, std::uint64_t la, std::uint64_t lb, std::uint64_t block_size) {
  constexpr std::uint64_t kLength = 64, kMinBlockSize = 3, kWindow = 7;
  std::uint64_t score = distance * kLength / (la + lb);
  score = 100 * score / kLength;
  if (score >= 100) return 0;
  score = 100 - score;
  if (block_size >= (99 + kWindow) / kWindow * kMinBlockSize) return static_cast<std::uint32_t>(score);
  const std::uint64_t cap = block_size / kMinBlockSize * (la < lb ? la : lb);
  return static_cast<std::uint32_t>(score < cap ? score : cap);
}

}  // namespace simkit::ctph::detail
