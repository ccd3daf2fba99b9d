// What the CPU and CUDA edit-distance paths share: Myers/Hyyrö's step over one 64-row
// block of the DP (constexpr, so that device code calls the same function) and the check
// of the strings the all-pairs functions take.
#pragma once

#include <bit>
#include <cstdint>
#include <utility>

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

// The diagonal band (distance_in_diagonal_band and the GPU's verification): a window of
// 64 x words rows that slides down one row a text character, so that bit r of a column j
// stands for pattern row j - above + r, diagonals above - (bits - 1) .. above. Rows 0 and
// above are made up with values growing upwards (row -i holds j + i), which is what the
// DP's boundary row 0 continues as; a row entering at the bottom and the row leaving at
// the top take +1 steps, which can only overstate. With `above` from band_above, every
// alignment of cost <= bits - 1 lies inside the band, so such distances come out exact.
constexpr std::int64_t band_above(std::int64_t bits, std::int64_t gap) { return (bits - 1 + gap) / 2; }

// Set bits of a word, on the device and the host alike.
constexpr int count_ones(std::uint64_t v) {
#ifdef __CUDA_ARCH__
  return __popcll(v);
#else
  return std::popcount(v);
#endif
}

// The bits of the band holding the diagonals an alignment of cost <= k can use (from
// -(k - gap) / 2 to (k + gap) / 2; bit r is diagonal above - r).
constexpr std::pair<std::int64_t, std::int64_t> band_bits_within(std::int64_t above, std::int64_t gap, std::int64_t k) {
  return {above - (k + gap) / 2, above + (k - gap) / 2};
}

// One word's share (bits first .. first + 63) of a lower bound of the cells at bits lo ..
// hi, less the top's value: the steps of bits 1 .. lo, less every -1 step of lo + 1 ..
// hi. Summed over the words and added to the top: the value at bit lo exactly when lo ==
// hi, and at most the least cell of lo .. hi.
constexpr std::int64_t band_bound_part(std::uint64_t pv, std::uint64_t mv, std::int64_t first, std::int64_t lo,
                                       std::int64_t hi) {
  const auto bits_between = [first](std::int64_t from, std::int64_t to) {  // this word's bits of [from, to]
    from = from > first ? from : first;
    to = to < first + 63 ? to : first + 63;
    if (from > to) return std::uint64_t{0};
    const std::int64_t count = to - from + 1;
    return (count == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1) << (from - first);
  };
  const std::uint64_t steps = bits_between(1, lo), downs = bits_between(lo + 1, hi);
  return std::int64_t{count_ones(pv & steps)} - count_ones(mv & steps) - count_ones(mv & downs);
}

// Carries into each 64-bit word of a multi-word addition, from the words that overflow
// on their own (generate) and those that are all ones (propagate): bit w of the result
// is the carry into word w (carry-lookahead as one 32-bit addition).
constexpr std::uint32_t word_carries(std::uint32_t generate, std::uint32_t propagate) {
  const std::uint32_t either = generate | propagate;
  return (either + generate) ^ either ^ generate;
}

// Throws InputError naming the first string longer than kMaxPairString, UsageError for a
// block outside the strings or a triangle that is not square.
void check_pair_blocks(const StringSet& strings, const std::vector<PairBlock>& blocks);

// Pairs in order of (a, b), as edit_pairs_cpu and edit_pairs_gpu return them.
void sort_pairs(std::vector<EditPair>& pairs);

}  // namespace simkit::dedup::detail
