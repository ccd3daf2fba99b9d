// The rate signatures' one pass over a document's bytes: included twice by ctph_hash.cpp,
// once for any processor and once compiled for AVX2 (SIMKIT_CTPH_AVX2 1), where the
// bytes are widened by one instruction. It uses ctph_hash.cpp's Pieces, PieceHashes and
// Lanes.

// The rolling hash depends only on the window's 7 bytes (h1 their sum, h2 their sum
// weighted 7 for the newest down to 1, h3 the newest xored over the others shifted 5 bits
// apiece), so eight positions are computed side by side from the bytes: p[-6 .. 7] must
// be readable. The levels ended, as boundary_levels: 1 + the trailing zeros of roll + 1
// (from the exponent of its lowest bit as a float) when roll + 1 is a multiple of 3
// (roll + 1 = 2^32, where the 32-bit sum wraps to 0, is not).
[[gnu::always_inline]] inline void levels_ended(const unsigned char* p, Lanes& levels) {
  Lanes h1{}, h2{}, h3{};
  for (int j = 0; j < 7; ++j) {  // the byte j before each position
#if SIMKIT_CTPH_AVX2
    const auto c = reinterpret_cast<Lanes>(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p - j))));
#else
    EightBytes b;
    std::memcpy(&b, p - j, sizeof b);
    const Lanes c = __builtin_convertvector(b, Lanes);
#endif
    h1 += c;
    h2 += h1;
    h3 ^= c << (5 * j);
  }
  const Lanes next = h1 + h2 + h3 + 1;
  const Lanes multiple_of_3 = (next * 0xAAAAAAABu <= 0x55555555u) & (next != 0);
  const Lanes lowest = next & -next;
  const FloatLanes as_float = __builtin_convertvector(__builtin_bit_cast(SignedLanes, lowest), FloatLanes);
  const Lanes one_more = ((__builtin_bit_cast(Lanes, as_float) >> 23) & 0xFF) - 126;  // exponent 127 + zeros
  levels = multiple_of_3 & (one_more < kBlockSizes ? one_more : kBlockSizes);
}

// One pass for N levels from out.lo, eight positions at a time: the levels each ends (side
// by side), from them the boundaries of the four smallest levels counted (a third of all
// bytes end a piece at block size 3: counted without a branch), then byte by byte every
// level's piece hash (N independent chains in one vector) and, only at a boundary of the
// lowest level kept, the pieces ended. (The vector work of one group overlaps the chains
// of the one before.)
template <std::uint32_t N>
void pass(std::span<const unsigned char> data, Pieces& out) {
  constexpr std::uint32_t kCounted = 4;
  constexpr std::size_t kBlock = 256;  // positions, a multiple of 8
  constexpr std::size_t kLanes = sizeof(PieceHashes) / sizeof(std::uint16_t);
  static_assert(N <= kLanes);
  PieceHashes h = kPieceInit + PieceHashes{};
  PieceHashes lane{};  // each lane's level above lo
  for (std::uint16_t i = 0; i < kLanes; ++i) lane[i] = i;
  // Levels below kCounted: boundaries and the last one's end, per lane within a segment of
  // positions (32-bit lanes, for documents of any size), added to the totals at each
  // segment's end. (64 KiB: documents past it, common in the tests, cross segments; the
  // sums cost a few dozen additions a segment.)
  constexpr std::size_t kSegment = std::size_t{1} << 16;
  Lanes count[kCounted] = {}, latest[kCounted] = {};
  std::uint64_t counted[kCounted] = {}, counted_last[kCounted] = {};
  const auto end_segment = [&](std::size_t segment) {
    for (std::uint32_t i = 0; i < kCounted; ++i) {
      for (std::size_t l = 0; l < 8; ++l) {
        counted[i] += count[i][l];
        if (latest[i][l] != 0) counted_last[i] = std::max<std::uint64_t>(counted_last[i], segment + latest[i][l]);
      }
      count[i] = latest[i] = Lanes{};
    }
  };
  std::uint64_t ended[kBlockSizes + 1] = {}, ended_at[kBlockSizes + 1] = {};  // by levels ended
  const unsigned char* bytes = data.data();
  const std::size_t n = data.size();
  const std::uint32_t lo = out.lo, rare = std::min(lo, kCounted);
  // A block's bytes where a window or a group's lanes would pass the data's edges, in
  // zeros (no byte comes before the first; the lanes past the last are not used).
  unsigned char edge[6 + kBlock + 8];
  for (std::size_t b = 0; b < n; b += kBlock) {
    if (b % kSegment == 0 && b > 0) end_segment(b - kSegment);
    const std::size_t m = std::min(kBlock, n - b);
    const unsigned char* at = bytes + b;
    if (b < 6 || b + kBlock + 1 > n) {
      std::memset(edge, 0, sizeof edge);
      const std::size_t before = std::min<std::size_t>(b, 6);
      std::memcpy(edge + 6 - before, bytes + b - before, before + m);
      at = edge + 6;
    }
    Lanes position = Lanes{1, 2, 3, 4, 5, 6, 7, 8} + static_cast<std::uint32_t>(b % kSegment);  // one past each
    for (std::size_t k = 0; k < m; k += 8, position += 8) {
      Lanes levels;
      levels_ended(at + k, levels);
      if (k + 8 > m) levels &= Lanes{0, 1, 2, 3, 4, 5, 6, 7} < static_cast<std::uint32_t>(m - k);
      for (std::uint32_t i = 0; i < kCounted; ++i) {
        const Lanes end = levels > i;  // all ones where a piece of level i ends
        count[i] -= end;
        latest[i] = end ? position : latest[i];
      }
      std::uint8_t ends[8];
      const EightBytes narrow = __builtin_convertvector(levels, EightBytes);
      std::memcpy(ends, &narrow, sizeof ends);
      for (std::size_t l = 0; l < std::min<std::size_t>(8, m - k); ++l) {
        if constexpr (N > 0) h = ((h << 4) + (h << 1) + h) ^ static_cast<std::uint16_t>(at[k + l]);
        const std::uint32_t levels_here = ends[l];
        if (levels_here > rare) [[unlikely]] {
          ++ended[levels_here];
          ended_at[levels_here] = b + k + l + 1;
          if constexpr (N > 0) {
            for (std::uint32_t i = 0; i < N && lo + i < levels_here; ++i) out.texts[i] += kBase64[h[i] % 64];
            h = lane + static_cast<std::uint16_t>(lo) < static_cast<std::uint16_t>(levels_here) ? kPieceInit : h;
          }
        }
      }
    }
  }
  std::uint64_t above = 0, above_last = 0;
  for (std::uint32_t i = kBlockSizes; i-- > kCounted;) {
    above += ended[i + 1];
    above_last = std::max(above_last, ended_at[i + 1]);
    out.boundaries[i] = above;
    out.last[i] = above_last;
  }
  end_segment(n == 0 ? 0 : (n - 1) / kSegment * kSegment);
  for (std::uint32_t i = 0; i < kCounted; ++i) out.boundaries[i] = counted[i], out.last[i] = counted_last[i];
  // The open tail is a piece too.
  for (std::uint32_t i = 0; i < N; ++i)
    if (out.last[lo + i] < n) out.texts[i] += kBase64[h[i] % 64];
}
