// What the CPU and CUDA edit-distance paths share: Myers/Hyyrö's step over one 64-row
// block of the DP (constexpr, so that device code calls the same function) and the check
// of the strings the all-pairs functions take.
#pragma once

#include <cstdint>

#include "dedup/edit_distance.hpp"

namespace simkit::dedup::detail {

inline constexpr int kWordBits = 64;
inline constexpr int kMaxPairWords = (kMaxPairString + kWordBits - 1) / kWordBits;

// Advances one 64-row block of the DP column by one text character (Hyyrö 2003, in edlib's
// form). pv and mv mark the rows whose vertical delta is +1 and -1, eq the rows whose
// pattern character equals the text character, hin is the horizontal delta entering
// above the block's first row (-1, 0 or +1). Returns the horizontal delta at row `out_bit`
// of the block: 63 gives the delta the block below takes as its hin.
constexpr int advance_block(std::uint64_t& pv, std::uint64_t& mv, std::uint64_t eq, int hin, int out_bit) {
  const std::uint64_t xv = eq | mv;
  if (hin < 0) eq |= 1;
  const std::uint64_t xh = (((eq & pv) + pv) ^ pv) | eq;
  std::uint64_t ph = mv | ~(xh | pv);
  std::uint64_t mh = pv & xh;
  const int hout = static_cast<int>((ph >> out_bit) & 1) - static_cast<int>((mh >> out_bit) & 1);
  ph <<= 1;
  mh <<= 1;
  if (hin < 0) mh |= 1;
  if (hin > 0) ph |= 1;
  pv = mh | ~(xv | ph);
  mv = ph & xv;
  return hout;
}

// Throws InputError naming the first string longer than kMaxPairString.
void check_pair_strings(const StringSet& strings);

}  // namespace simkit::dedup::detail
