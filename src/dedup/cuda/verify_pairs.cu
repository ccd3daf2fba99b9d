// Edit distances of pairs of documents on the GPU (distances_within_gpu in
// dedup/edit_distance.hpp), for the edit-rate pipeline's verification. One warp a pair,
// taken from a shared counter (the caller orders the pairs longest first): the common
// prefix and suffix are skipped 32 bytes a step, then the distance is computed in a
// diagonal band (dedup/edit_detail.hpp) that slides down the pattern one row a text
// character. The band starts one word wide and doubles while the pair's limit asks for
// more (Ukkonen's doubling: most pairs verified are far closer than their limit). A lower
// bound from the pair's byte counts comes first: pairs it puts past their limit are not
// banded at all, and bands it shows too narrow are skipped.
// - Limits up to kGpuNarrowEdits (verify_kernel): up to 32 words, lane w holding word w,
//   the match masks made by ballots over the pattern's bytes (2 a word a character).
// - Wider limits (wide_kernel, on a stream of its own beside the other): up to 512 words,
//   16 a lane; the masks read from a table of the pattern's (each warp a slot of 256
//   character rows), since ballots would cost 64 a lane a character at that width. Its
//   bands: one word, then 64 and doubling. Its blocks start before the narrow kernel's
//   (the host waits for them: wait_for_wide_blocks).
// - Narrow limits past kDeferredWords words: bands by ballots up to that width, then,
//   where the pattern fits the tables, the pair is deferred to the wide kernel run once
//   more after the narrow one (its tables: one launch of 20,000 Boost headers spent 45% of
//   its warps' time in the 8- to 32-word bands, 5,600 to 17,000 cycles a byte, call 101).
// distance_in_diagonal_band is the same computation on the CPU, step for step.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/staged_copy.hpp"
#include "dedup/edit_detail.hpp"
#include "dedup/edit_distance.hpp"

namespace simkit::dedup {

namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr unsigned kAll = 0xffffffffu;
constexpr int kNarrowWords = (kGpuNarrowEdits + 1) / 64;
static_assert(kNarrowWords == kWarp, "a lane a word of the widest narrow band");
constexpr int kWideLaneWords = kGpuBandWords / kWarp;  // words a lane of the widest band
// A warp's step down a long text costs about the same for bands of 2 to 64 words (the
// lanes' exchanges more than the words): a wide pair's first band is one word (as the
// narrow kernel's, no lane waiting on another: the closest copies), its second 64 words
// (one H200, 100 KB at distance 2,944: 59 ms doubling from one word, 29 ms from 64).
constexpr int kWideSecondWords = 64;
// A wide block takes a whole multiprocessor: 8 warps at up to 255 registers fill its
// register file, so that no narrow block shares its schedulers (a long pair's warp among
// the narrow kernel's many ran several times slower).
constexpr int kWideThreads = 256;

struct Job {
  const char* chars;
  const std::uint64_t* offsets;  // text i is chars[offsets[i], offsets[i + 1])
  const TextPair* pairs;
  const std::uint32_t* which;  // the pairs this kernel verifies
  std::uint32_t count;
  std::uint32_t* out;
  unsigned* next;  // the next of `which` a warp takes
  // wide_kernel: a warp's slot of 256 rows of row_words masks, zero between pairs.
  std::uint64_t* tables;
  std::uint64_t row_words;
  // wide_kernel: a flag a block in mapped host memory, set when the block starts (none
  // when null).
  unsigned* started;
  // verify_kernel: where pairs past kDeferredWords go, their count, and the row words of
  // the tables that take them (0: none deferred).
  std::uint32_t* deferred;
  unsigned* deferred_count;
  std::uint64_t deferred_row_words;
  // wide_kernel: the pairs' count on the device (the deferred ones: null otherwise), the
  // most edits resolved, and a lower bound of every pair's distance known before.
  const unsigned* device_count;
  std::int64_t most_edits;
  std::int64_t known_bound;
};

// The narrow kernel's widest band by ballots for pairs it may defer, and the least limit
// of a pair it may defer: the bands answer distances below it, so a deferred pair's
// distance is at least this (the host counts the pairs by it, the kernel defers by it).
constexpr int kDeferredWords = 4;
constexpr std::int64_t kDeferredLimit = 64 * kDeferredWords;

// A pair's texts after their common ends, the shorter one the pattern.
struct Trimmed {
  const char* pattern;
  const char* text;
  std::int64_t m, n;
};

// The length of the common run of a and b read forwards (step 1) or backwards (step -1)
// from their first bytes, at most n.
__device__ std::uint64_t common_run(const char* a, const char* b, std::uint64_t n, int step, int lane) {
  for (std::uint64_t at = 0; at < n; at += kWarp) {
    const std::uint64_t i = at + static_cast<std::uint64_t>(lane);
    const auto offset = static_cast<std::int64_t>(i) * step;
    const unsigned differ = __ballot_sync(kAll, i >= n || a[offset] != b[offset]);
    if (differ != 0) return min(n, at + static_cast<std::uint64_t>(__ffs(static_cast<int>(differ)) - 1));
  }
  return n;
}

__device__ Trimmed trim_pair(const Job& job, const TextPair& pair, int lane) {
  const char* a = job.chars + job.offsets[pair.a];
  const char* b = job.chars + job.offsets[pair.b];
  std::uint64_t la = job.offsets[pair.a + 1] - job.offsets[pair.a], lb = job.offsets[pair.b + 1] - job.offsets[pair.b];
  const std::uint64_t prefix = common_run(a, b, min(la, lb), 1, lane);
  a += prefix;
  b += prefix;
  la -= prefix;
  lb -= prefix;
  const std::uint64_t suffix = la == 0 || lb == 0 ? 0 : common_run(a + la - 1, b + lb - 1, min(la, lb), -1, lane);
  la -= suffix;
  lb -= suffix;
  return {la <= lb ? a : b, la <= lb ? b : a, static_cast<std::int64_t>(min(la, lb)), static_cast<std::int64_t>(max(la, lb))};
}

// A lower bound of the pair's distance from its bytes' counts: an edit raises by at most
// one the pattern's surplus of bytes over the text's (summed over the byte values it has
// more of) and the text's surplus over the pattern's, so the distance is at least the
// larger surplus (and at least n - m, their difference). `counts` is the warp's 256
// counters, zero before and after.
__device__ std::int64_t count_bound(const Trimmed& t, int* counts, int lane) {
  for (std::int64_t i = lane; i < t.m; i += kWarp) atomicAdd(&counts[static_cast<unsigned char>(t.pattern[i])], 1);
  for (std::int64_t i = lane; i < t.n; i += kWarp) atomicAdd(&counts[static_cast<unsigned char>(t.text[i])], -1);
  __syncwarp();
  unsigned more = 0, fewer = 0;
  for (int c = lane; c < 256; c += kWarp) {
    more += static_cast<unsigned>(max(counts[c], 0));
    fewer += static_cast<unsigned>(max(-counts[c], 0));
    counts[c] = 0;
  }
  __syncwarp();
  return max(__reduce_add_sync(kAll, more), __reduce_add_sync(kAll, fewer));
}

// The lower bound a pair's bands start from: past `limit` already when the lengths differ
// by more (the bytes then not counted), else count_bound's.
__device__ std::int64_t pair_bound(const Trimmed& t, std::int64_t limit, int* counts, int lane) {
  return t.n - t.m > limit ? t.n - t.m : count_bound(t, counts, lane);
}

// Ukkonen's doubling: band(words, k) for a band of one word, then of second_words, then
// twice as wide, while the distance is beyond the band and the limit asks for more. Bands
// narrower than `bound` (pair_bound: a lower bound of the distance) are skipped: they
// cannot hold it.
template <typename Band>
__device__ std::uint32_t doubling(const Trimmed& t, std::int64_t limit, std::int64_t bound, int second_words,
                                  int most_words, const Band& band) {
  if (bound > limit) return kBeyond;
  if (t.m == 0) return static_cast<std::uint32_t>(t.n);
  std::uint32_t result = kBeyond;
  for (int words = 1; words <= most_words; words = words == 1 ? second_words : 2 * words) {
    const std::int64_t k = min(limit, std::int64_t{64} * words - 1);
    if (k < bound) continue;  // (so the band holds the lengths' difference: bound >= n - m)
    result = band(words, k);
    if (result != kBeyond || k == limit) break;
  }
  return result;
}

// The distance of pattern (m > 0 bytes) and text (n >= m) in a band of `words` words when
// at most k (<= 64 words - 1, >= n - m), else kBeyond. Every lane of the warp calls it.
// kOneWord (words == 1): every lane holds the one word, and no lane waits on another but
// for the match ballots.
template <bool kOneWord>
__device__ std::uint32_t band_distance(const char* pattern, std::int64_t m, const char* text, std::int64_t n,
                                       std::int64_t k, int words, int lane) {
  const std::int64_t bits = std::int64_t{64} * words, gap = n - m;
  const std::int64_t above = detail::band_above(bits, gap);
  const int word = kOneWord ? 0 : lane;
  const bool active = word < words;
  const std::int64_t first = std::int64_t{64} * word;  // this lane's first bit
  const std::int64_t made_up = min(max(above - first + 1, std::int64_t{0}), std::int64_t{64});
  std::uint64_t mv = !active ? 0 : made_up == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << made_up) - 1;
  std::uint64_t pv = active ? ~mv : 0;
  std::int64_t top = above;  // D at the window's top row, the same in every lane
  const auto k_rows = detail::band_bits_within(above, gap, k);
  // The lanes' parts of a sum over the band's bits.
  const auto band_sum = [](int part) { return kOneWord ? part : __reduce_add_sync(kAll, part); };
  int chunk = 0;  // text bytes j-1 .. j+30, one a lane
  for (std::int64_t j = 1; j <= n; ++j) {
    const int slot = static_cast<int>((j - 1) % kWarp);
    if (slot == 0) chunk = j - 1 + lane < n ? static_cast<unsigned char>(text[j - 1 + lane]) : 0;
    const auto c = static_cast<char>(__shfl_sync(kAll, chunk, slot));
    // Down one row: bit 0 of the word below enters at bit 63; below the band a +1 step.
    unsigned below = 1;
    if constexpr (!kOneWord) {
      below = __shfl_down_sync(kAll, static_cast<unsigned>(pv & 1) | static_cast<unsigned>(mv & 1) << 1, 1);
      if (lane == words - 1) below = 1;
    }
    pv = (pv >> 1) | std::uint64_t{below & 1} << 63;
    mv = (mv >> 1) | std::uint64_t{below >> 1} << 63;
    // The rows matching c, 32 a ballot: half h of the band is rows row0 + 32h + lane.
    std::uint64_t eq = 0;
    const std::int64_t row0 = j - above;
    for (int half = 0; half < 2 * words; ++half) {
      const std::int64_t row = row0 + 32 * half + lane;
      const unsigned got = __ballot_sync(kAll, row >= 1 && row <= m && pattern[row - 1] == c);
      if (half >> 1 == word) eq |= std::uint64_t{got} << (32 * (half & 1));
    }
    if (!active) pv = mv = eq = 0;
    // Myers/Hyyrö's step over all words; the addition's carries looked ahead by ballot.
    const std::uint64_t x = eq & pv;
    std::uint64_t sum = x + pv;
    if constexpr (!kOneWord) {
      const unsigned generate = __ballot_sync(kAll, active && sum < x);
      const unsigned propagate = __ballot_sync(kAll, active && sum == ~std::uint64_t{0});
      sum += (detail::word_carries(generate, propagate) >> lane) & 1;
    }
    const std::uint64_t xv = eq | mv, xh = (sum ^ pv) | eq;
    std::uint64_t ph = mv | ~(xh | pv), mh = pv & xh;
    // Up one bit: bit 63 of the word above enters at bit 0; above the band a +1 step.
    unsigned from = 1;
    if constexpr (!kOneWord) {
      from = __shfl_up_sync(kAll, static_cast<unsigned>(ph >> 63) | static_cast<unsigned>(mh >> 63) << 1, 1);
      if (lane == 0) from = 1;
    }
    ph = (ph << 1) | std::uint64_t{from & 1};
    mh = (mh << 1) | std::uint64_t{from >> 1};
    pv = active ? mh | ~(xv | ph) : 0;
    mv = active ? ph & xv : 0;
    unsigned top_step = static_cast<unsigned>(pv & 1) | static_cast<unsigned>(mv & 1) << 1;
    if constexpr (!kOneWord) top_step = __shfl_sync(kAll, top_step, 0);
    top += 1 + static_cast<std::int64_t>(top_step & 1) - static_cast<std::int64_t>(top_step >> 1);
    if (j % kWarp == 0) {  // Ukkonen's cut-off: every cell of the diagonals that matter above k
      const auto part = static_cast<int>(detail::band_bound_part(pv, mv, first, k_rows.first, k_rows.second));
      if (top + band_sum(part) > k) return kBeyond;
    }
  }
  // Row m is bit above - gap: add the steps of bits 1 .. that one to the top.
  const auto part = static_cast<int>(detail::band_bound_part(pv, mv, first, above - gap, above - gap));
  const std::int64_t d = top + band_sum(part);
  return d <= k ? static_cast<std::uint32_t>(d) : kBeyond;
}

// The next pair a warp takes (an index into job.pairs), false when none is left.
__device__ bool next_pair(const Job& job, int lane, std::uint32_t& p) {
  unsigned u = 0;
  if (lane == 0) u = atomicAdd(job.next, 1u);
  u = __shfl_sync(kAll, u, 0);
  if (u >= (job.device_count != nullptr ? *job.device_count : job.count)) return false;
  p = job.which[u];
  return true;
}

// Each warp's byte counters (count_bound), zeroed.
template <int kWarps>
__device__ int* warp_counts(int (&counts)[kWarps][256], int lane) {
  int* mine = counts[threadIdx.x / kWarp];
  for (int c = lane; c < 256; c += kWarp) mine[c] = 0;
  __syncwarp();
  return mine;
}

__global__ void __launch_bounds__(kThreads) verify_kernel(Job job) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  __shared__ int counts[kThreads / kWarp][256];
  int* const mine = warp_counts(counts, lane);
  for (std::uint32_t p = 0; next_pair(job, lane, p);) {
    const TextPair pair = job.pairs[p];
    const Trimmed t = trim_pair(job, pair, lane);
    const std::int64_t limit = min(pair.limit, kGpuNarrowEdits), bound = pair_bound(t, limit, mine, lane);
    const bool deferrable = limit >= kDeferredLimit && job.deferred_row_words > 1 &&
                            static_cast<std::uint64_t>(t.m) < 64 * (job.deferred_row_words - 1);
    const std::uint32_t result =
        doubling(t, limit, bound, 2, deferrable ? kDeferredWords : kNarrowWords, [&](int words, std::int64_t k) {
          return words == 1 ? band_distance<true>(t.pattern, t.m, t.text, t.n, k, 1, lane)
                            : band_distance<false>(t.pattern, t.m, t.text, t.n, k, words, lane);
        });
    if (deferrable && result == kBeyond && bound <= limit) {  // beyond the bands tried, within the limit's
      if (lane == 0) job.deferred[atomicAdd(job.deferred_count, 1u)] = p;
      continue;
    }
    if (lane == 0) job.out[p] = result;
  }
}

// Word `at` of a table row of `count` words; 0 outside (rows before the pattern's first
// and after its last match nothing).
__device__ std::uint64_t row_word(const std::uint64_t* row, std::int64_t at, std::uint64_t count) {
  return at >= 0 && static_cast<std::uint64_t>(at) < count ? row[at] : 0;
}

// Sets (or clears) the pattern's bits in a warp's table: bit i % 64 of word i / 64 of
// row pattern[i].
__device__ void mark_pattern(std::uint64_t* table, std::uint64_t row_words, const char* pattern, std::int64_t m,
                             bool set, int lane) {
  for (std::int64_t i = lane; i < m; i += kWarp) {
    auto* word = reinterpret_cast<unsigned long long*>(table + static_cast<unsigned char>(pattern[i]) * row_words +
                                                        static_cast<std::uint64_t>(i >> 6));
    if (set) atomicOr(word, 1ull << (i & 63));
    else *word = 0;
  }
  __syncwarp();
}

// band_distance for a band of words = 32 x W words: lane l holds words W l .. W l + W - 1,
// its match masks read from the pattern's table. Every lane of the warp calls it.
template <int W>
__device__ std::uint32_t wide_band_distance(const std::uint64_t* table, std::uint64_t row_words, std::int64_t m,
                                            const char* text, std::int64_t n, std::int64_t k, int words, int lane) {
  const std::int64_t bits = std::int64_t{64} * words, gap = n - m;
  const std::int64_t above = detail::band_above(bits, gap);
  const std::int64_t first = std::int64_t{64} * W * lane;  // this lane's first bit
  // pv/mv: the vertical deltas; a lane's flags a word fit an unsigned.
  static_assert(W >= 2 && W <= 16);
  std::uint64_t pv[W], mv[W], eq[W];
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const std::int64_t made_up = min(max(above - (first + 64 * w) + 1, std::int64_t{0}), std::int64_t{64});
    mv[w] = made_up == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << made_up) - 1;
    pv[w] = ~mv[w];
  }
  // D at the window's top row, kept by lane 0 (whose word 0 holds the top's steps) and
  // shared where needed.
  std::int64_t top = above;
  const auto k_rows = detail::band_bits_within(above, gap, k);
  const auto bound_part = [&](std::int64_t lo, std::int64_t hi) {
    std::int64_t part = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) part += detail::band_bound_part(pv[w], mv[w], first + 64 * w, lo, hi);
    return __shfl_sync(kAll, top, 0) + __reduce_add_sync(kAll, static_cast<int>(part));
  };
  // The table's words for a character: those the lane's rows read at text position j
  // (its bit 0 is pattern byte j - above - 1 + first), loaded a character ahead so that
  // the loads wait on nothing.
  std::uint64_t words_ahead[W + 1];
  const auto load_words = [&](std::int64_t j, int c) {
    const std::int64_t at = (j - above - 1 + first) >> 6;
    const std::uint64_t* row = table + static_cast<std::uint64_t>(c) * row_words;
#pragma unroll
    for (int w = 0; w <= W; ++w) words_ahead[w] = row_word(row, at + w, row_words);
  };
  int chunk = static_cast<unsigned char>(lane < n ? text[lane] : 0);  // text bytes j-1 .. j+30, one a lane
  load_words(1, __shfl_sync(kAll, chunk, 0));
  for (std::int64_t j = 1; j <= n; ++j) {
    // The rows matching this character.
    const int shift = static_cast<int>((j - above - 1 + first) & 63);
#pragma unroll
    for (int w = 0; w < W; ++w)
      eq[w] = shift == 0 ? words_ahead[w] : (words_ahead[w] >> shift) | (words_ahead[w + 1] << (64 - shift));
    if (j < n) {
      if (j % kWarp == 0) chunk = j + lane < n ? static_cast<unsigned char>(text[j + lane]) : 0;
      load_words(j + 1, __shfl_sync(kAll, chunk, static_cast<int>(j % kWarp)));
    }
    // Down one row: bit 0 of the next word enters at bit 63; below the band a +1 step.
    unsigned below = __shfl_down_sync(kAll, static_cast<unsigned>(pv[0] & 1) | static_cast<unsigned>(mv[0] & 1) << 1, 1);
    if (lane == kWarp - 1) below = 1;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const std::uint64_t p_in = w + 1 < W ? pv[w + 1] & 1 : below & 1, m_in = w + 1 < W ? mv[w + 1] & 1 : below >> 1;
      pv[w] = (pv[w] >> 1) | p_in << 63;
      mv[w] = (mv[w] >> 1) | m_in << 63;
    }
    // Myers/Hyyrö's step: the addition (eq & pv) + pv over the band, each lane's carry
    // in looked ahead by ballot from every lane's own (generate) and all-ones (propagate).
    // The words' sums are made again where needed rather than kept (registers).
    unsigned overflows = 0, ones = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const std::uint64_t x = eq[w] & pv[w], sum = x + pv[w];
      overflows |= static_cast<unsigned>(sum < x) << w;
      ones |= static_cast<unsigned>(sum == ~std::uint64_t{0}) << w;
    }
    // A word's carry out: its own overflow, or the carry in through all ones.
    const auto carry_out = [&](int w, unsigned carry) { return ((overflows >> w) | (carry & (ones >> w))) & 1; };
    unsigned generate = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) generate = carry_out(w, generate);
    const unsigned generates = __ballot_sync(kAll, generate != 0);
    const unsigned propagates = __ballot_sync(kAll, ones == (1u << W) - 1);
    unsigned carries = 0;  // bit w: the carry into word w
    for (unsigned w = 0, carry = (detail::word_carries(generates, propagates) >> lane) & 1; w < W; ++w) {
      carries |= carry << w;
      carry = carry_out(static_cast<int>(w), carry);
    }
    // ph and mh of word w, before their shift up.
    const auto horizontal = [&](int w) {
      const std::uint64_t sum = (eq[w] & pv[w]) + pv[w] + ((carries >> w) & 1);
      const std::uint64_t xh = (sum ^ pv[w]) | eq[w];
      return std::pair<std::uint64_t, std::uint64_t>{mv[w] | ~(xh | pv[w]), pv[w] & xh};
    };
    // Up one bit: bit 63 of the word before enters at bit 0; above the band a +1 step.
    const auto [last_ph, last_mh] = horizontal(W - 1);
    unsigned from = __shfl_up_sync(kAll, static_cast<unsigned>(last_ph >> 63) | static_cast<unsigned>(last_mh >> 63) << 1, 1);
    if (lane == 0) from = 1;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const auto [ph, mh] = horizontal(w);
      const std::uint64_t xv = eq[w] | mv[w];
      const std::uint64_t ph_in = (ph << 1) | (from & 1), mh_in = (mh << 1) | (from >> 1);
      from = static_cast<unsigned>(ph >> 63) | static_cast<unsigned>(mh >> 63) << 1;
      pv[w] = mh_in | ~(xv | ph_in);
      mv[w] = ph_in & xv;
    }
    top += 1 + static_cast<std::int64_t>(pv[0] & 1) - static_cast<std::int64_t>(mv[0] & 1);
    if (j % kWarp == 0 && bound_part(k_rows.first, k_rows.second) > k) return kBeyond;  // Ukkonen's cut-off
  }
  // Row m is bit above - gap: add the steps of bits 1 .. that one to the top.
  const std::int64_t d = bound_part(above - gap, above - gap);
  return d <= k ? static_cast<std::uint32_t>(d) : kBeyond;
}

__global__ void __launch_bounds__(kWideThreads, 1) wide_kernel(Job job) {
  if (threadIdx.x == 0 && job.started != nullptr) {
    *static_cast<volatile unsigned*>(job.started + blockIdx.x) = 1;
    __threadfence_system();
  }
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::uint64_t warp = blockIdx.x * (kWideThreads / kWarp) + threadIdx.x / kWarp;
  std::uint64_t* table = job.tables + warp * 256 * job.row_words;
  __shared__ int counts[kWideThreads / kWarp][256];
  int* const mine = warp_counts(counts, lane);
  for (std::uint32_t p = 0; next_pair(job, lane, p);) {
    const TextPair pair = job.pairs[p];
    const Trimmed t = trim_pair(job, pair, lane);
    const std::int64_t limit = min(static_cast<std::int64_t>(pair.limit), job.most_edits);
    const std::int64_t bound = max(pair_bound(t, limit, mine, lane), job.known_bound);
    if (bound > limit) {  // beyond: no table to mark
      if (lane == 0) job.out[p] = kBeyond;
      continue;
    }
    mark_pattern(table, job.row_words, t.pattern, t.m, true, lane);
    const std::uint32_t result =
        doubling(t, limit, bound, kWideSecondWords, kGpuBandWords, [&](int words, std::int64_t k) {
          if (words == 1) return band_distance<true>(t.pattern, t.m, t.text, t.n, k, 1, lane);
          const auto band = [&](auto lane_words) {
            return wide_band_distance<decltype(lane_words)::value>(table, job.row_words, t.m, t.text, t.n, k, words, lane);
          };
          static_assert(kWideLaneWords == 16 && kWideSecondWords == 2 * kWarp, "the lane widths below");
          switch (words / kWarp) {
            case 2: return band(std::integral_constant<int, 2>{});
            case 4: return band(std::integral_constant<int, 4>{});
            case 8: return band(std::integral_constant<int, 8>{});
            default: return band(std::integral_constant<int, 16>{});
          }
        });
    mark_pattern(table, job.row_words, t.pattern, t.m, false, lane);
    if (lane == 0) job.out[p] = result;
  }
}

// Texts from this size go through pinned buffers (cuda::StagedCopy); below it, making
// those buffers costs more than the driver's own staging.
constexpr std::size_t kStagedBytes = std::size_t{64} << 20;

// The most bytes of texts on the device at once, unless the caller says.
std::size_t automatic_budget() {
  std::size_t free = 0, total = 0;
  SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return std::max<std::size_t>(std::min(free / 2, std::size_t{4} << 30), std::size_t{64} << 20);
}

// Pairs [begin, end) and the texts they name, packed anew (text indices renumbered).
struct Chunk {
  std::vector<char> chars;
  std::vector<std::uint64_t> offsets{0};
  std::vector<TextPair> pairs;
};

// The pairs from `begin` whose texts together fit `budget` bytes (at least one pair).
Chunk next_chunk(const char* chars, const std::vector<std::uint64_t>& offsets, const std::vector<TextPair>& pairs,
                 std::size_t begin, std::size_t budget, std::vector<std::uint32_t>& renumbered) {
  Chunk chunk;
  std::vector<std::uint32_t> touched;
  const auto place = [&](std::uint32_t text) {
    if (renumbered[text] != kBeyond) return renumbered[text];
    renumbered[text] = static_cast<std::uint32_t>(chunk.offsets.size() - 1);
    touched.push_back(text);
    chunk.chars.insert(chunk.chars.end(), chars + offsets[text], chars + offsets[text + 1]);
    chunk.offsets.push_back(chunk.chars.size());
    return renumbered[text];
  };
  for (std::size_t p = begin; p < pairs.size(); ++p) {
    const TextPair& pair = pairs[p];
    std::size_t more = 0;
    for (const std::uint32_t t : {pair.a, pair.b})
      if (renumbered[t] == kBeyond) more += offsets[t + 1] - offsets[t];
    if (!chunk.pairs.empty() && chunk.chars.size() + more > budget) break;
    chunk.pairs.push_back({place(pair.a), place(pair.b), pair.limit});
  }
  for (const std::uint32_t t : touched) renumbered[t] = kBeyond;
  return chunk;
}

}  // namespace

// The bytes of the wide kernel's tables at most, unless the memory is short.
constexpr std::size_t kTableBudget = std::size_t{1} << 30;

namespace {

// Waits until every wide block has set its flag (it has started), so that the narrow
// kernel launched next cannot take the multiprocessors the wide blocks need (a whole one
// each); gives up once the wide kernel is done, or after 20 ms (a device busy with other
// work). The wide stream's priority alone did not settle the order: in calls 89-90 the wide
// kernel ran after the narrow one in 9 of 16 runs (169-182 ms, against 118-126 ms).
void wait_for_wide_blocks(const cuda::PinnedBuffer<unsigned>& started, const cuda::Event& wide_done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  const auto all_started = [&] {
    for (std::size_t b = 0; b < started.size(); ++b)
      if (static_cast<const volatile unsigned*>(started.get())[b] == 0) return false;
    return true;
  };
  while (!all_started() && std::chrono::steady_clock::now() < deadline && cudaEventQuery(wide_done.get()) == cudaErrorNotReady) {
  }
}

// The pairs' distances on the current device, their texts at `d_chars` (on the device,
// written by work on `stream` or done before) with host_offsets; into host_out.
void verify_on_device(const char* d_chars, const std::vector<std::uint64_t>& host_offsets, const TextPair* host_pairs,
                      std::size_t count, std::uint32_t* host_out, const cuda::Stream& stream, double* device_ms) {
  const cuda::Stream wide_stream{cuda::Stream::Urgent{}}, narrow_stream;
  cuda::Event start(cudaEventDefault), stop(cudaEventDefault), narrow_stop(cudaEventDefault);
  // The kernels' next pairs (narrow, wide, deferred) and the deferred pairs' count.
  cuda::DeviceBuffer<unsigned> next(4);
  // Each pair to the kernel of its limit, in the caller's order; the wide kernel's
  // tables as long as its longest pattern.
  std::vector<std::uint32_t> which(count);
  // Deferrable: the narrow pairs whose limits pass the deferred bands (the tables sized for
  // those whose shorter texts fit them; others may fit once trimmed).
  std::size_t narrow = 0, wide = count, deferrable = 0;
  std::uint64_t longest = 0, longest_deferrable = 0;
  for (std::size_t p = 0; p < count; ++p) {
    const TextPair& pair = host_pairs[p];
    const std::uint64_t la = host_offsets[pair.a + 1] - host_offsets[pair.a], lb = host_offsets[pair.b + 1] - host_offsets[pair.b];
    if (pair.limit > kGpuNarrowEdits && gpu_band_edits(la, lb) > kGpuNarrowEdits) {
      which[--wide] = static_cast<std::uint32_t>(p);
      longest = std::max(longest, std::min(la, lb));
    } else {
      which[narrow++] = static_cast<std::uint32_t>(p);
      if (pair.limit >= kDeferredLimit) {
        ++deferrable;
        if (std::min(la, lb) <= kGpuTableText) longest_deferrable = std::max(longest_deferrable, std::min(la, lb));
      }
    }
  }
  std::reverse(which.begin() + static_cast<std::ptrdiff_t>(wide), which.end());
  const std::size_t wide_count = count - wide;
  // On the kernel's stream, so that the kernel follows the copies.
  const auto upload = [&](auto* to, const auto* from, std::size_t n) {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(to, from, n * sizeof(*from), cudaMemcpyHostToDevice, stream.get()));
  };
  cuda::DeviceBuffer<std::uint64_t> d_offsets(host_offsets.size());
  upload(d_offsets.get(), host_offsets.data(), host_offsets.size());
  cuda::DeviceBuffer<TextPair> d_pairs(count);
  upload(d_pairs.get(), host_pairs, count);
  cuda::DeviceBuffer<std::uint32_t> d_which(count);
  upload(d_which.get(), which.data(), count);
  cuda::DeviceBuffer<std::uint32_t> d_out(count);
  SIMKIT_CUDA_CHECK(cudaMemsetAsync(next.get(), 0, 4 * sizeof(unsigned), stream.get()));
  const Job job{d_chars, d_offsets.get(), d_pairs.get(), d_which.get(), 0, d_out.get(), next.get(), nullptr, 0, nullptr,
                nullptr, nullptr, 0, nullptr, kGpuBandEdits, 0};
  // The wide pairs' kernel first, on a stream of the greatest priority, then the narrow
  // pairs' beside it once every wide block has started (wait_for_wide_blocks), both after
  // the copies: the wide blocks (each a whole multiprocessor's registers) are placed before
  // the narrow kernel's persistent grid fills the rest (were the narrow blocks first, the
  // wide would wait for them to finish).
  cuda::DeviceBuffer<std::uint64_t> tables;
  cuda::PinnedBuffer<unsigned> started;
  std::size_t wide_blocks = 0;
  std::uint64_t row_words = 0;
  if (wide_count > 0) {
    row_words = (longest + 63) / 64 + 1;
    const std::size_t slot_bytes = 256 * row_words * sizeof(std::uint64_t);
    std::size_t free = 0, total = 0;
    SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    // At most a quarter of the multiprocessors: the narrow pairs are most of the work (at
    // 20,000 Boost headers on H200 hosts, calls 85-88: a quarter 118-127 ms of kernels,
    // an eighth 122-132 ms in the same calls, a sixth 127 ms; with the count bound, call
    // 91: a quarter, a sixth and an eighth alike, the narrow kernel's 88-93 ms the longer).
    const std::size_t per_block = kWideThreads / kWarp;
    wide_blocks = std::max<std::size_t>(
        1, std::min({(wide_count + per_block - 1) / per_block, std::size_t(std::max(cuda::sm_count() / 4, 1)),
                     std::min(free / 4, kTableBudget) / (per_block * slot_bytes)}));
    tables = cuda::DeviceBuffer<std::uint64_t>(wide_blocks * per_block * 256 * row_words);  // a slot every warp
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(tables.get(), 0, wide_blocks * per_block * slot_bytes, stream.get()));
    started = cuda::PinnedBuffer<unsigned>(wide_blocks);
    std::fill_n(started.get(), wide_blocks, 0u);
  }
  // The deferred pairs' list and tables, their kernel's blocks on the multiprocessors the
  // wide kernel leaves (it may still run), as many as the memory allows.
  cuda::DeviceBuffer<std::uint32_t> deferred;
  cuda::DeviceBuffer<std::uint64_t> deferred_tables;
  std::size_t deferred_blocks = 0;
  std::uint64_t deferred_row_words = 0;
  if (longest_deferrable > 0) {
    deferred_row_words = (longest_deferrable + 63) / 64 + 1;
    const std::size_t per_block = kWideThreads / kWarp, slot_bytes = 256 * deferred_row_words * sizeof(std::uint64_t);
    std::size_t free = 0, total = 0;
    SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    deferred_blocks = std::min({(deferrable + per_block - 1) / per_block,
                                std::size_t(std::max(cuda::sm_count() - static_cast<int>(wide_blocks), 1)),
                                std::min(free / 4, kTableBudget) / (per_block * slot_bytes)});
    if (deferred_blocks == 0) {
      deferred_row_words = 0;  // no room: the narrow kernel's bands take them all
    } else {
      deferred = cuda::DeviceBuffer<std::uint32_t>(deferrable);
      deferred_tables = cuda::DeviceBuffer<std::uint64_t>(deferred_blocks * per_block * 256 * deferred_row_words);
      SIMKIT_CUDA_CHECK(cudaMemsetAsync(deferred_tables.get(), 0, deferred_blocks * per_block * slot_bytes, stream.get()));
    }
  }
  start.record(stream.get());
  if (wide_count > 0) {
    SIMKIT_CUDA_CHECK(cudaStreamWaitEvent(wide_stream.get(), start.get()));
    Job wide_job = job;
    wide_job.which += wide;
    wide_job.count = static_cast<std::uint32_t>(wide_count);
    wide_job.next += 1;
    wide_job.tables = tables.get();
    wide_job.row_words = row_words;
    SIMKIT_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&wide_job.started), started.get(), 0));
    wide_kernel<<<static_cast<unsigned>(wide_blocks), kWideThreads, 0, wide_stream.get()>>>(wide_job);
    SIMKIT_CUDA_CHECK_LAUNCH();
    stop.record(wide_stream.get());
    SIMKIT_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), stop.get()));
    if (narrow > 0) wait_for_wide_blocks(started, stop);
  }
  if (narrow > 0) {
    int per_sm = 0;
    SIMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, verify_kernel, kThreads, 0));
    const std::size_t warps_wanted = (narrow + kThreads / kWarp - 1) / (kThreads / kWarp);
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(warps_wanted, std::size_t(std::max(per_sm, 1)) * cuda::sm_count()));
    Job narrow_job = job;
    narrow_job.count = static_cast<std::uint32_t>(narrow);
    narrow_job.deferred = deferred.get();
    narrow_job.deferred_count = next.get() + 2;
    narrow_job.deferred_row_words = deferred_row_words;
    SIMKIT_CUDA_CHECK(cudaStreamWaitEvent(narrow_stream.get(), start.get()));
    verify_kernel<<<blocks, kThreads, 0, narrow_stream.get()>>>(narrow_job);
    SIMKIT_CUDA_CHECK_LAUNCH();
    if (deferred_blocks > 0) {  // known beyond the narrow kernel's widest band by ballots
      Job deferred_job = job;
      deferred_job.which = deferred.get();
      deferred_job.device_count = next.get() + 2;
      deferred_job.next = next.get() + 3;
      deferred_job.tables = deferred_tables.get();
      deferred_job.row_words = deferred_row_words;
      deferred_job.most_edits = kGpuNarrowEdits;
      deferred_job.known_bound = kDeferredLimit;
      wide_kernel<<<static_cast<unsigned>(deferred_blocks), kWideThreads, 0, narrow_stream.get()>>>(deferred_job);
      SIMKIT_CUDA_CHECK_LAUNCH();
    }
    narrow_stop.record(narrow_stream.get());
    SIMKIT_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), narrow_stop.get()));
  }
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(host_out, d_out.get(), count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                    stream.get()));
  stream.sync();
  if (device_ms != nullptr)
    *device_ms += std::max(wide_count > 0 ? cuda::elapsed_ms(start, stop) : 0.0f,
                           narrow > 0 ? cuda::elapsed_ms(start, narrow_stop) : 0.0f);
}

// Host bytes to device memory on `stream`: through pinned buffers when there are many.
void send(char* to, const char* from, std::size_t bytes, const cuda::Stream& stream) {
  if (bytes >= kStagedBytes) {
    cuda::StagedCopy copier;
    copier.copy(to, from, bytes, stream.get());
  } else if (bytes > 0) {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream.get()));
  }
}

}  // namespace

std::vector<std::uint32_t> distances_within_gpu(const char* chars, const std::vector<std::uint64_t>& offsets,
                                                const std::vector<TextPair>& pairs, int device, double* device_ms,
                                                std::size_t text_budget) {
  if (device_ms != nullptr) *device_ms = 0;
  std::vector<std::uint32_t> out(pairs.size(), kBeyond);
  if (pairs.empty()) return out;
  const cuda::DeviceGuard guard(device);
  const cuda::Stream stream;
  const std::size_t budget = text_budget != 0 ? text_budget : automatic_budget();
  const auto run = [&](const char* host_chars, std::size_t bytes, const std::vector<std::uint64_t>& host_offsets,
                       const TextPair* host_pairs, std::size_t count, std::uint32_t* host_out) {
    cuda::DeviceBuffer<char> d_chars(std::max<std::size_t>(bytes, 1));
    send(d_chars.get(), host_chars, bytes, stream);
    verify_on_device(d_chars.get(), host_offsets, host_pairs, count, host_out, stream, device_ms);
  };
  if (offsets.back() <= budget) {
    run(chars, offsets.back(), offsets, pairs.data(), pairs.size(), out.data());
    return out;
  }
  // More text than the device holds at once: chunks of pairs, each with its own texts.
  std::vector<std::uint32_t> renumbered(offsets.size() - 1, kBeyond);
  for (std::size_t begin = 0; begin < pairs.size();) {
    const Chunk chunk = next_chunk(chars, offsets, pairs, begin, budget, renumbered);
    run(chunk.chars.data(), chunk.chars.size(), chunk.offsets, chunk.pairs.data(), chunk.pairs.size(), out.data() + begin);
    begin += chunk.pairs.size();
  }
  return out;
}

// Texts on a device, sent ahead of their pairs.
struct GpuTexts {
  int device = 0;
  std::vector<std::uint64_t> offsets{0};
  cuda::DeviceBuffer<char> chars;
  cuda::Stream stream;  // the copies', then the verification's
};

void GpuTextsDeleter::operator()(GpuTexts* texts) const {
  if (texts == nullptr) return;
  const cuda::QuietDeviceGuard guard(texts->device);
  delete texts;
}

GpuTextsPtr send_texts_to_gpu(const std::vector<std::string_view>& texts, int device, std::size_t text_budget) {
  const cuda::DeviceGuard guard(device);
  GpuTextsPtr out(new GpuTexts);
  out->device = device;
  out->offsets.reserve(texts.size() + 1);
  for (const std::string_view text : texts) out->offsets.push_back(out->offsets.back() + text.size());
  if (out->offsets.back() > (text_budget != 0 ? text_budget : automatic_budget())) return nullptr;
  out->chars = cuda::DeviceBuffer<char>(std::max<std::uint64_t>(out->offsets.back(), 1));
  std::vector<std::span<const std::byte>> pieces(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) pieces[i] = std::as_bytes(std::span(texts[i].data(), texts[i].size()));
  cuda::StagedCopy copier;
  copier.copy_gathered(out->chars.get(), pieces, out->stream.get());
  return out;
}

std::vector<std::uint32_t> distances_within_gpu(const GpuTexts& texts, const std::vector<TextPair>& pairs,
                                                double* device_ms) {
  if (device_ms != nullptr) *device_ms = 0;
  std::vector<std::uint32_t> out(pairs.size(), kBeyond);
  if (pairs.empty()) return out;
  const cuda::DeviceGuard guard(texts.device);
  verify_on_device(texts.chars.get(), texts.offsets, pairs.data(), pairs.size(), out.data(), texts.stream, device_ms);
  return out;
}

void prepare_rate_gpu(int device) {
  // A signature pair and a text pair: every kernel the pipeline runs on a GPU, once; and
  // what the two filters' threads score signature pairs with.
  StringSet strings;
  strings.add("abcdefgh");
  strings.add("abcdefgx");
  edit_pairs_gpu(strings, strings, true, PairRule{0.5, 0}, EditKernel::bit_parallel, device);
  keep_edit_pairs_collectors(device, 2);
  distances_within_gpu(strings.chars.data(), {0, 8, 16}, {TextPair{0, 1, 4}, TextPair{0, 1, kGpuNarrowEdits + 1}},
                       device);
}

}  // namespace simkit::dedup
