// Context-triggered piecewise hashing (CTPH), compatible with ssdeep 2.14.1 / libfuzzy:
// the same signatures ("blocksize:first:second") and the same match scores.
//
// A rolling hash over the last 7 bytes marks piece boundaries; each piece contributes
// one base64 character (the low 6 bits of an FNV-style hash of the piece) to the first
// part, computed at the block size, and to the second part, at twice the block size.
// The block size is 3 * 2^n, the smallest whose first part reaches 32 characters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace simkit::ctph {

inline constexpr std::size_t kSignatureLength = 64;  // the first part at most
inline constexpr std::uint64_t kMinBlockSize = 3;

// The signature of `data` exactly as ssdeep prints it (without the file name).
std::string hash(std::span<const unsigned char> data);

// The rolling hash over the last 7 bytes that marks piece boundaries.
struct RollingHash {
  unsigned char window[7] = {};
  std::uint32_t h1 = 0, h2 = 0, h3 = 0, n = 0;  // n: the window's oldest slot
  // Takes one byte; returns the hash of the window now.
  std::uint32_t update(unsigned char c) {
    h2 -= h1;
    h2 += 7 * c;
    h1 += c;
    h1 -= window[n];
    window[n] = c;
    n = n + 1 == 7 ? 0 : n + 1;
    h3 = (h3 << 5) ^ c;
    return value();
  }
  std::uint32_t value() const { return h1 + h2 + h3; }
};

// The thesis's signature for edit rates (seed 000, chapter 4): ssdeep's pieces at block
// size 3 * 2^n for the smallest n whose signature has at most `max_length` characters,
// one character a piece with no cut at 64, and the signature at twice that block size,
// for documents whose sizes straddle a doubling.
struct RateSignature {
  std::uint64_t block_size = kMinBlockSize;
  std::string text, doubled;
};
RateSignature rate_signature(std::span<const unsigned char> data, std::size_t max_length);

// The same pieces at a block size chosen by the document's length instead: the smallest
// 3 * 2^n with 3 * 2^n * target_length >= the length (about target_length / 2 to
// target_length characters on ordinary text). Near-duplicates differ little in length,
// so their block sizes are equal or double and they always share a signature's block
// size, which the thesis's choice does not promise: repetitive text's signature can shrink
// from over a hundred characters to one in a single doubling, so two copies a byte apart
// can land two block sizes apart.
RateSignature length_signature(std::span<const unsigned char> data, std::size_t target_length);

// {rate_signature(data, max_length), length_signature(data, target_length)}, mostly in
// one pass over the bytes.
std::pair<RateSignature, RateSignature> rate_and_length_signatures(std::span<const unsigned char> data,
                                                                   std::size_t max_length, std::size_t target_length);

// The most characters one edit of a document (a byte replaced, inserted or deleted)
// changes in its rate signature, whatever the block size: the edit changes the rolling
// hash of the 7 windows that hold it, so pieces end differently at up to 7 places, and
// the piece holding it hashes differently; every other piece is unchanged. The signature
// edit distance of documents d edits apart is at most d times this.
inline constexpr std::uint32_t kSignatureCharsPerEdit = 8;

// Incremental form: feed bytes in any pieces, then digest. `total` (the whole input's
// length) must be known in advance, as ssdeep's file hashing knows it, because it
// decides when smaller block sizes can be dropped.
class Hasher {
 public:
  explicit Hasher(std::uint64_t total);
  void update(std::span<const unsigned char> bytes);
  std::string digest() const;

 private:
  struct Block {
    char digest[kSignatureLength];
    char half_digest;
    std::uint32_t length;
  };
  void step(unsigned char c);
  void fork();
  void reduce();

  std::uint64_t total_;
  std::uint32_t first_ = 0, end_ = 1;  // live block sizes: 3 << first_ .. 3 << (end_ - 1)
  Block blocks_[31];
  // The open piece's hash per block size, and its hash for the cut second part: apart
  // from the blocks, so that the per-byte update runs over two short arrays.
  std::uint32_t h_[31], half_h_[31];
  RollingHash roll_;
};

// A signature read once for many comparisons: block size, and both parts with runs of
// more than three equal characters cut to three, each with the set of its 7-character
// substrings (packed, sorted) and a 64-bit summary of that set for a quick "nothing in
// common".
struct Prepared {
  std::uint64_t block_size = 0;
  struct Part {
    std::string text;
    std::vector<std::uint64_t> runs;  // 7-character substrings, 8 bits a character
    std::uint64_t summary = 0;        // bit (substring hash % 64) of each
  } first, second;
};

// What prepare makes of the parts: their texts and their 7-character substrings (what
// compare() needs), or their texts alone (all the GPU's matchers read: a million
// signatures' substrings are half a GB of the host's memory). add_substrings completes
// the second kind.
enum class Substrings { made, left_out };

// Reads a signature as libfuzzy does (see compare); false when it is malformed.
bool prepare(std::string_view signature, Prepared& out, Substrings substrings = Substrings::made);
void add_substrings(Prepared& prepared);
// Whether compare() can take it: the substrings of every part long enough to have some.
bool has_substrings(const Prepared& prepared);

// compare() on prepared signatures: the same score.
int compare(const Prepared& a, const Prepared& b);

// The similarity of two signatures, 0 (unrelated) to 100, as libfuzzy's fuzzy_compare:
// block sizes must be equal or double, runs of more than three equal characters count
// as three, parts must share a 7-character substring, then a weighted edit distance
// scaled to 0..100, capped for small block sizes. Text after a comma (ssdeep's
// ",filename") is ignored. Returns -1 for a malformed signature.
int compare(std::string_view a, std::string_view b);

}  // namespace simkit::ctph
