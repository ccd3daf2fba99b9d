// CTPH signature parts as the GPU matchers read them (6-bit codes, padded to 64), and the
// bit-parallel steps both matchers share: the LCS of two parts (libfuzzy's weighted edit
// distance is la + lb - 2 LCS) and the common 7-character substring the score needs.
// A part held as masks: mask[c * stride + t] bit i set where character i of the part is c
// (stride and t select one column of a block's masks, or a warp's one set with stride 1).
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/prefault.hpp"
#include "dedup/ctph_score.hpp"
#include "dedup/sorted_runs.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "simkit/uninitialized_allocator.hpp"

namespace simkit::dedup::gpu {

constexpr int kPartBytes = 64;    // a part's characters as 6-bit codes
constexpr unsigned kCodes = 65;   // base64, and padding (kPad)
constexpr unsigned char kPad = 64;

// A part as the kernels read it: its codes, kPad past its length.
struct alignas(16) PartCodes {
  unsigned char code[kPartBytes];
};

// Codes of many parts, left unset by resize (encode writes every byte, on all cores).
using CodeVector = std::vector<PartCodes, UninitializedAllocator<PartCodes>>;

// A match as the kernels write it: laid out as the caller's Match, so that matches come
// down from the device straight into the answer.
struct DeviceMatch {
  std::uint32_t a, b;
  std::int32_t score;
};
static_assert(sizeof(DeviceMatch) == sizeof(Match) && offsetof(Match, a) == 0 && offsetof(Match, b) == 4 &&
              offsetof(Match, score) == 8);

// Calls step(mask) for each character of a y part, its 16-byte words read whole; the
// padding code past the end has an empty mask, which leaves both recurrences unchanged.
template <typename Step>
__device__ __forceinline__ void for_each_mask(const std::uint64_t* mask, int stride, int t, const PartCodes& y,
                                              unsigned ly, Step&& step) {
  const uint4* words = reinterpret_cast<const uint4*>(y.code);
  for (unsigned q = 0; q * 16 < ly; ++q) {
    const uint4 w = words[q];
    const unsigned packed[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 16; ++k) step(mask[((packed[k / 4] >> (k % 4 * 8)) & 0xff) * stride + t]);
  }
}

// LCS of the x part held as masks and `Ways` y parts, bit-parallel (Hyyro), their chains
// side by side: each step waits on the one before, so a warp with one chain waits on every
// step's latency where few warps share an SM (the every-pair kernel's masks fill its
// shared memory). The y parts are read to the longest one's end: past a part's own end its
// padding code has an empty mask, which leaves its chain unchanged. Word: the masks' low
// 32 bits suffice where x's part has at most 32 characters (a step's carries and borrows
// only rise, so the low bits never depend on the high ones).
template <int Ways, typename Word>
__device__ __forceinline__ void lcs_of_width(const std::uint64_t* mask, int stride, int t, const PartCodes* const* y,
                                             const unsigned* ly, unsigned lx, unsigned* common) {
  Word v[Ways];
  unsigned longest = 0;
#pragma unroll
  for (int w = 0; w < Ways; ++w) {
    v[w] = ~Word{0};
    longest = max(longest, ly[w]);
  }
  for (unsigned q = 0; q * 16 < longest; ++q) {
    unsigned packed[Ways][4];
#pragma unroll
    for (int w = 0; w < Ways; ++w) {
      const uint4 word = reinterpret_cast<const uint4*>(y[w]->code)[q];
      packed[w][0] = word.x, packed[w][1] = word.y, packed[w][2] = word.z, packed[w][3] = word.w;
    }
#pragma unroll
    for (int k = 0; k < 16; ++k) {
#pragma unroll
      for (int w = 0; w < Ways; ++w) {
        const Word m = static_cast<Word>(mask[((packed[w][k / 4] >> (k % 4 * 8)) & 0xff) * stride + t]);
        const Word u = v[w] & m;
        v[w] = (v[w] + u) | (v[w] - u);
      }
    }
  }
  const Word within = lx >= sizeof(Word) * 8 ? ~Word{0} : (Word{1} << lx) - 1;
#pragma unroll
  for (int w = 0; w < Ways; ++w) common[w] = static_cast<unsigned>(__popcll(static_cast<std::uint64_t>(~v[w] & within)));
}

// The LCS of x's part (lx characters, as masks) with each of `Ways` y parts. `narrow`
// (lx <= 32) takes 32-bit steps; callers keep it the same across a warp.
template <int Ways = 1>
__device__ __forceinline__ void lcs(const std::uint64_t* mask, int stride, int t, const PartCodes* const* y,
                                    const unsigned* ly, unsigned lx, bool narrow, unsigned* common) {
  if (narrow) lcs_of_width<Ways, std::uint32_t>(mask, stride, t, y, ly, lx, common);
  else lcs_of_width<Ways, std::uint64_t>(mask, stride, t, y, ly, lx, common);
}

__device__ __forceinline__ unsigned lcs(const std::uint64_t* mask, int stride, int t, const PartCodes& y, unsigned ly,
                                        unsigned lx, bool narrow) {
  const PartCodes* const ys[1] = {&y};
  unsigned common = 0;
  lcs<1>(mask, stride, t, ys, &ly, lx, narrow, &common);
  return common;
}

// Whether the parts share a 7-character substring: bit i of run[k] marks a common
// substring of k + 1 characters ending at x's character i.
__device__ __forceinline__ bool share_run(const std::uint64_t* mask, int stride, int t, const PartCodes& y,
                                          unsigned ly) {
  std::uint64_t run[6] = {0, 0, 0, 0, 0, 0}, found = 0;
  for_each_mask(mask, stride, t, y, ly, [&](std::uint64_t m) {
    found |= (run[5] << 1) & m;
#pragma unroll
    for (int k = 5; k > 0; --k) run[k] = (run[k - 1] << 1) & m;
    run[0] = m;
  });
  return found != 0;
}

// libfuzzy's score of two parts compared at `block_size`, given their LCS; 0 when they
// share no 7-character substring or the score is below `threshold`.
__device__ __forceinline__ unsigned part_score(unsigned lx, unsigned ly, unsigned common, std::uint64_t block_size,
                                               int threshold, const std::uint64_t* mask, int stride, int t,
                                               const PartCodes& y) {
  if (lx < 7 || ly < 7) return 0;
  const std::uint32_t score = ctph::detail::part_score(lx + ly - 2 * common, lx, ly, block_size);
  if (score < static_cast<std::uint32_t>(threshold) || !share_run(mask, stride, t, y, ly)) return 0;
  return score;
}

inline int code_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The parts as codes in the order given; false when a part holds a character outside
// base64 or more than 64 (only a signature made by hand can), which the kernels cannot
// tell apart or hold.
// The signatures are read in their own order (their texts lie in that order in memory)
// and each one's codes written to its place in `order`: a million signatures read in
// block-size order cost a cache miss or more each.
inline bool encode(const std::vector<ctph::Prepared>& signatures, const std::vector<std::uint32_t>& order,
                   CodeVector& codes, std::vector<unsigned char>& lengths) {
  std::array<unsigned char, 256> table;  // kPad + 1: outside base64
  table.fill(kPad + 1);
  for (int c = 0; c < 256; ++c)
    if (const int code = code_of(static_cast<char>(c)); code >= 0) table[c] = static_cast<unsigned char>(code);
  std::vector<std::uint32_t> place(order.size());
  tbb::parallel_for(std::size_t{0}, order.size(), [&](std::size_t k) { place[order[k]] = static_cast<std::uint32_t>(k); });
  if (codes.empty()) {  // huge pages, where granted: written faster, and page-locked faster for the upload
    codes.reserve(order.size() * 2);
    advise_huge_pages(codes.data(), order.size() * 2 * sizeof(PartCodes));
  }
  codes.resize(order.size() * 2);
  lengths.resize(order.size() * 2);
  std::atomic<bool> base64{true};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, order.size()), [&](const tbb::blocked_range<std::size_t>& range) {
    bool outside = false;
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      const std::size_t k = place[i];
      const std::string* texts[2] = {&signatures[i].first.text, &signatures[i].second.text};
      for (int p = 0; p < 2; ++p) {
        const auto* text = reinterpret_cast<const unsigned char*>(texts[p]->data());
        outside |= texts[p]->size() > static_cast<std::size_t>(kPartBytes);  // (only a hand-made part)
        const std::size_t length = std::min<std::size_t>(texts[p]->size(), kPartBytes);
        unsigned char code[kPartBytes];
        std::memset(code, kPad, sizeof code);
        for (std::size_t c = 0; c < length; ++c) {
          const unsigned char value = table[text[c]];
          outside |= value > kPad;
          code[c] = value > kPad ? kPad : value;
        }
        std::memcpy(codes[k * 2 + p].code, code, sizeof code);
        lengths[k * 2 + p] = static_cast<unsigned char>(texts[p]->size());
      }
    }
    if (outside) base64 = false;
  });
  return base64;
}

// The kernels' matches as the caller's, sorted by (a, b).
inline MatchList sorted_matches(const std::vector<DeviceMatch>& found) {
  MatchList all(found.size());
  std::transform(found.begin(), found.end(), all.begin(),
                 [](const DeviceMatch& m) { return Match{m.a, m.b, static_cast<int>(m.score)}; });
  tbb::parallel_sort(all.begin(), all.end(), by_pair);
  return all;
}

}  // namespace simkit::dedup::gpu
