// CTPH signatures, step for step as libfuzzy 2.14.1 computes them (see ctph.hpp), so
// that the output is byte-identical: the same piece boundaries, the same block-size
// choice and the same treatment of the signature's tail.
#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simkit/ctph.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace simkit::ctph {

namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::uint32_t kHashPrime = 0x01000193;
constexpr std::uint32_t kHashInit = 0x28021967;
constexpr std::uint32_t kBlockSizes = 31;

constexpr std::uint64_t block_size(std::uint32_t i) { return kMinBlockSize << i; }
constexpr std::uint32_t piece_hash(unsigned char c, std::uint32_t h) { return (h * kHashPrime) ^ c; }

// How many block sizes, from the smallest up, the rolling hash `roll` ends a piece at:
// block size 3 * 2^i when roll + 1 is a multiple of it (in 64 bits, so that 2^32 - 1 does
// not wrap). A boundary at 3 * 2^(i+1) is one at 3 * 2^i too.
std::uint32_t boundary_levels(std::uint32_t roll) {
  const std::uint64_t next = std::uint64_t{roll} + 1;
  if (next % kMinBlockSize != 0) return 0;
  return std::min<std::uint32_t>(kBlockSizes, static_cast<std::uint32_t>(std::countr_zero(next)) + 1);
}

}  // namespace

Hasher::Hasher(std::uint64_t total) : total_(total) {
  blocks_[0] = Block{{}, '\0', 0};
  h_[0] = half_h_[0] = kHashInit;
}

void Hasher::update(std::span<const unsigned char> bytes) {
  for (const unsigned char c : bytes) step(c);
}

// A new block size starts from the largest live one's state, the first time that one
// ends a piece.
void Hasher::fork() {
  if (end_ >= kBlockSizes) return;
  blocks_[end_] = Block{{}, '\0', 0};
  h_[end_] = h_[end_ - 1];
  half_h_[end_] = half_h_[end_ - 1];
  ++end_;
}

// The smallest block size is dropped once the input is too long for it to be chosen and
// the next one already has half a signature.
void Hasher::reduce() {
  if (end_ - first_ < 2) return;
  if (block_size(first_) * kSignatureLength >= total_) return;
  if (blocks_[first_ + 1].length < kSignatureLength / 2) return;
  ++first_;
}

void Hasher::step(unsigned char c) {
  const std::uint32_t roll = roll_.update(c);

  for (std::uint32_t i = first_; i < end_; ++i) {
    h_[i] = piece_hash(c, h_[i]);
    half_h_[i] = piece_hash(c, half_h_[i]);
  }
  const std::uint32_t levels = boundary_levels(roll);
  for (std::uint32_t i = first_; i < end_ && i < levels; ++i) {
    Block& b = blocks_[i];
    if (b.length == 0) fork();
    b.digest[b.length] = kBase64[h_[i] % 64];
    b.half_digest = kBase64[half_h_[i] % 64];
    if (b.length < kSignatureLength - 1) {
      // Room for more: the piece ends here. (At the last place the hash runs on, so
      // the signature's last character stands for the whole tail.)
      b.digest[++b.length] = '\0';
      h_[i] = kHashInit;
      if (b.length < kSignatureLength / 2) {
        half_h_[i] = kHashInit;
        b.half_digest = '\0';
      }
    } else {
      reduce();
    }
  }
}

std::string Hasher::digest() const {
  // The block size: the smallest at which a signature of the whole input fits, then
  // down to the largest live one, then down while the signature is under half length.
  std::uint32_t i = first_;
  while (block_size(i) * kSignatureLength < total_ && i + 1 < kBlockSizes) ++i;
  while (i >= end_) --i;
  while (i > first_ && blocks_[i].length < kSignatureLength / 2) --i;

  // Each part ends with the piece still open (when the rolling hash is not zero), or
  // else with the character a full signature wrote at its last place.
  const std::uint32_t roll = roll_.value();
  const Block& first = blocks_[i];
  std::string out = std::to_string(block_size(i)) + ":";
  out.append(first.digest, first.length);
  if (roll != 0)
    out += kBase64[h_[i] % 64];
  else if (first.length < kSignatureLength && first.digest[first.length] != '\0')
    out += first.digest[first.length];
  out += ':';
  if (i + 1 < end_) {
    // The second part, at twice the block size, is cut to half length; its open piece
    // is the half hash, which stopped resetting there.
    const Block& second = blocks_[i + 1];
    const std::uint32_t length = std::min<std::uint32_t>(second.length, kSignatureLength / 2 - 1);
    out.append(second.digest, length);
    if (roll != 0)
      out += kBase64[half_h_[i + 1] % 64];
    else if (second.digest[length] != '\0')
      out += second.half_digest;
  } else if (roll != 0) {
    out += kBase64[h_[i] % 64];
  }
  return out;
}

namespace {

// One pass over the bytes: the pieces at block size levels [lo, hi), and the boundaries
// at every level (how rate_signature chooses its level).
struct Pieces {
  std::uint32_t lo = 0;
  std::vector<std::string> texts;  // level lo + i
  std::uint64_t boundaries[kBlockSizes] = {}, last[kBlockSizes] = {};  // count, and the byte after the last
  std::uint64_t size = 0;

  // The signature at `level` and at the next (when below kBlockSizes), both in [lo, hi).
  RateSignature signature(std::uint32_t level) const {
    RateSignature out;
    out.block_size = block_size(level);
    out.text = texts[level - lo];
    if (level + 1 < kBlockSizes) out.doubled = texts[level + 1 - lo];
    return out;
  }
  // Whether signature(level) can be given.
  bool holds(std::uint32_t level) const {
    return level >= lo && std::min(level + 2, kBlockSizes) <= lo + texts.size();
  }
  // rate_signature's level: the smallest whose signature is at most max_length long
  // (its boundaries, and one more character when bytes follow the last).
  std::uint32_t rate_level(std::size_t max_length) const {
    std::uint32_t level = 0;
    const auto length = [&](std::uint32_t i) { return boundaries[i] + (last[i] < size ? 1 : 0); };
    while (level + 1 < kBlockSizes && length(level) > max_length) ++level;
    return level;
  }
};

// The most levels one pass computes (rate_and_length_signatures' window).
constexpr std::uint32_t kPassLevels = 6;

// The levels' piece hashes side by side in one register. A signature character is the
// hash's low 6 bits, which depend only on the low 6 bits of what was multiplied and
// xored: 16-bit lanes and a multiplier equal to the prime modulo 64 (19) give the same
// characters, and keep the chain (a multiply and a xor a byte) in a register, the
// multiply by shifts and adds.
using PieceHashes = std::uint16_t __attribute__((vector_size(16)));
constexpr std::uint16_t kPieceInit = static_cast<std::uint16_t>(kHashInit);
static_assert(kHashPrime % 64 == 19);

// Eight positions' rolling hashes, and how many levels each ends a piece at.
using Lanes = std::uint32_t __attribute__((vector_size(32)));
using SignedLanes = std::int32_t __attribute__((vector_size(32)));
using FloatLanes = float __attribute__((vector_size(32)));
using EightBytes = std::uint8_t __attribute__((vector_size(8)));

// The pass (ctph_pass.inl), compiled twice: for any processor of the target, and for
// AVX2 (the bytes widened by one instruction), chosen at run time where the processor
// has it.
#define SIMKIT_CTPH_AVX2 0
namespace generic {
#include "dedup/ctph_pass.inl"
}  // namespace generic
#if defined(__x86_64__)
#undef SIMKIT_CTPH_AVX2
#define SIMKIT_CTPH_AVX2 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
namespace avx2 {
#include "dedup/ctph_pass.inl"
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

template <std::uint32_t N>
void dispatch(std::span<const unsigned char> data, Pieces& out) {
#if defined(__x86_64__)
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (has_avx2) return avx2::pass<N>(data, out);
#endif
  generic::pass<N>(data, out);
}

// The pieces at block size levels [lo, hi) (at most kPassLevels of them), and the
// boundaries at every level.
Pieces pieces(std::span<const unsigned char> data, std::uint32_t lo, std::uint32_t hi) {
  Pieces out;
  out.lo = lo;
  out.size = data.size();
  out.texts.resize(hi - lo);
  switch (hi - lo) {
    case 0: dispatch<0>(data, out); break;
    case 1: dispatch<1>(data, out); break;
    case 2: dispatch<2>(data, out); break;
    case 3: dispatch<3>(data, out); break;
    case 4: dispatch<4>(data, out); break;
    case 5: dispatch<5>(data, out); break;
    case 6: dispatch<6>(data, out); break;
    default: throw std::logic_error("ctph pieces: more levels than one pass computes");
  }
  return out;
}

// The signature at block size level `level` and at the next, as rate_signature gives them.
RateSignature signature_at(std::span<const unsigned char> data, std::uint32_t level) {
  return pieces(data, level, std::min(level + 2, kBlockSizes)).signature(level);
}

// length_signature's level: the smallest 3 * 2^n with 3 * 2^n * target_length >= the length.
std::uint32_t length_level(std::size_t bytes, std::size_t target_length) {
  std::uint32_t level = 0;
  const auto target = static_cast<double>(std::max<std::size_t>(target_length, 1));
  while (level + 1 < kBlockSizes && static_cast<double>(block_size(level)) * target < static_cast<double>(bytes))
    ++level;
  return level;
}

}  // namespace

RateSignature rate_signature(std::span<const unsigned char> data, std::size_t max_length) {
  // First the length at every block size, then the pieces at the level chosen.
  return signature_at(data, pieces(data, 0, 0).rate_level(max_length));
}

RateSignature length_signature(std::span<const unsigned char> data, std::size_t target_length) {
  return signature_at(data, length_level(data.size(), target_length));
}

std::pair<RateSignature, RateSignature> rate_and_length_signatures(std::span<const unsigned char> data,
                                                                   std::size_t max_length, std::size_t target_length) {
  // Both levels are usually within a step or two of each other (ordinary text has about
  // one piece a block size): one pass computes the pieces of the levels around the
  // length's, and a rate level outside them (repetitive text) costs a second pass.
  const std::uint32_t by_length = length_level(data.size(), target_length);
  const std::uint32_t lo = by_length >= 2 ? by_length - 2 : 0;
  const Pieces around = pieces(data, lo, std::min(lo + kPassLevels, kBlockSizes));
  const std::uint32_t rate = around.rate_level(max_length);
  return {around.holds(rate) ? around.signature(rate) : signature_at(data, rate), around.signature(by_length)};
}

std::string hash(std::span<const unsigned char> data) {
  Hasher hasher(data.size());
  hasher.update(data);
  return hasher.digest();
}

}  // namespace simkit::ctph
