// Edit distances for near-duplicate detection: Levenshtein distance (unit costs) of whole
// documents, and all pairs of short strings (CTPH signatures) below an edit rate, on the
// CPU or the GPU with three kernels kept behind one interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simkit/dedup.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

// Levenshtein distance by the textbook two-row DP: the reference the fast paths are
// tested against.
std::uint32_t edit_distance_reference(std::string_view a, std::string_view b);

// The same distance by Myers/Hyyrö bit-parallel DP (64-bit words, any length).
std::uint32_t edit_distance(std::string_view a, std::string_view b);

// The distance when it is at most `limit`, else nothing: for verifying long documents,
// where only distances under a threshold matter.
std::optional<std::uint32_t> edit_distance_within(std::string_view a, std::string_view b, std::uint32_t limit);

// The same distance computed as the GPU's verification does (distances_within_gpu): in a
// diagonal band of 64 x `words` cells (1..kGpuBandWords), after the common prefix and
// suffix: the distance when at most min(limit, 64 x words - 1), else nothing; words
// outside 1..kGpuBandWords: UsageError. Here so that the tests check the GPU's algorithm
// on any machine.
std::optional<std::uint32_t> distance_in_diagonal_band(std::string_view a, std::string_view b, std::uint32_t limit,
                                                       int words);

// Whether distance d of strings of lengths la and lb is an edit rate below `rate`:
// d / (la + lb) < rate, computed as d < rate * (la + lb) in double on CPU and GPU alike
// (constexpr, so that the CUDA kernels evaluate this very expression). Two empty strings
// have rate 0. False for d + 1 whenever false for d: since d >= |la - lb|, a length
// difference that fails the test rules a pair out uncomputed.
constexpr bool below_rate(std::uint32_t d, std::size_t la, std::size_t lb, double rate) {
  return static_cast<double>(d) < rate * static_cast<double>(la + lb) || (d == 0 && la + lb == 0 && rate > 0);
}

// Which pairs of signatures are candidates: an edit rate below `rate` (below_rate), or a
// distance of at most `max_distance` whatever the lengths (short signatures say little
// about their documents: a few edits can change most of them).
struct PairRule {
  double rate = 0;
  std::uint32_t max_distance = 0;
  constexpr bool passes(std::uint32_t d, std::size_t la, std::size_t lb) const {
    return d <= max_distance || below_rate(d, la, lb, rate);
  }
  // Whether a pair of these lengths can pass at all (d >= |la - lb|).
  constexpr bool lengths_can_pass(std::size_t la, std::size_t lb) const {
    const std::size_t gap = la > lb ? la - lb : lb - la;
    return gap <= max_distance || below_rate(static_cast<std::uint32_t>(gap), la, lb, rate);
  }
};

// Short strings packed end to end: string i is chars[offsets[i], offsets[i + 1]).
struct StringSet {
  std::string chars;
  std::vector<std::uint32_t> offsets{0};
  std::size_t size() const { return offsets.size() - 1; }
  std::string_view operator[](std::size_t i) const {
    return std::string_view(chars).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
  void add(std::string_view s) {
    if (chars.size() + s.size() > UINT32_MAX)  // the offsets are 32 bits
      throw Failure("more than 4 GiB of strings in one set (edit-distance pairs): " + std::to_string(size()) +
                    " strings so far");
    chars.append(s);
    offsets.push_back(static_cast<std::uint32_t>(chars.size()));
  }
  void add(const StringSet& more) {
    for (std::size_t i = 0; i < more.size(); ++i) add(more[i]);
  }
};

// The longest string the all-pairs kernels take.
inline constexpr std::size_t kMaxPairString = 320;

struct EditPair {
  std::uint32_t a = 0, b = 0;  // indices into xs and ys
  std::uint32_t distance = 0;
  friend bool operator==(const EditPair&, const EditPair&) = default;
};

// EditKernel (simkit/dedup.hpp): which GPU kernel edit_pairs_gpu runs.
const char* kernel_name(EditKernel kernel);

// Pairs of one StringSet's strings to score: rows [x, x + rows) against columns
// [y, y + columns). With `triangle` (then x == y and rows == columns) only each row's later
// columns: the pairs i < j of the rows among themselves.
struct PairBlock {
  std::uint32_t x = 0, rows = 0, y = 0, columns = 0;
  bool triangle = false;
  std::uint64_t pairs() const {
    return triangle ? std::uint64_t{rows} * (rows > 0 ? rows - 1 : 0) / 2 : std::uint64_t{rows} * columns;
  }
};

// Every pair of every block whose edit distance passes `rule` (a and b index `strings`),
// sorted by (a, b); a pair in two blocks comes twice. Strings longer than kMaxPairString:
// InputError; a block outside the strings, or a triangle that is not square: UsageError.
// CPU: all cores.
std::vector<EditPair> edit_pairs_cpu(const StringSet& strings, const std::vector<PairBlock>& blocks, PairRule rule);

// The same on CUDA device `device` with the kernel chosen, every block in one launch (a
// caller with many small blocks pays one upload, launch and wait, not one a block); the
// same pairs as the CPU, in the same order unless `order` is as_found (the kernels'
// order, which varies: sorting a million pairs on one thread costs more than finding
// them). `device_ms`, when given, receives the kernels' time (device events). A CPU-only
// build throws Failure.
enum class PairOrder { sorted, as_found };
std::vector<EditPair> edit_pairs_gpu(const StringSet& strings, const std::vector<PairBlock>& blocks, PairRule rule,
                                     EditKernel kernel, int device, double* device_ms = nullptr,
                                     PairOrder order = PairOrder::sorted);

// Every pair (i, j), i in xs and j in ys, that passes `rule` (a indexes xs, b ys), as
// above. With `triangle`, ys must be xs and only pairs i < j count.
std::vector<EditPair> edit_pairs_cpu(const StringSet& xs, const StringSet& ys, bool triangle, PairRule rule);
std::vector<EditPair> edit_pairs_gpu(const StringSet& xs, const StringSet& ys, bool triangle, PairRule rule,
                                     EditKernel kernel, int device, double* device_ms = nullptr,
                                     PairOrder order = PairOrder::sorted);

// Makes what `count` threads scoring signature pairs on `device` at once use (a stream,
// events, an output buffer each), kept for the process, so that their first calls do not
// (nothing in a CPU-only build).
void keep_edit_pairs_collectors(int device, std::size_t count);

// A pair of texts to verify: indices into the texts, and the largest distance that matters.
struct TextPair {
  std::uint32_t a = 0, b = 0;
  std::uint32_t limit = 0;
};

// The GPU's verification bands. A pair whose limit is at most kGpuNarrowEdits is computed
// in bands of up to 32 words, a lane a word, their match masks made by ballots. A wider
// limit takes bands of up to kGpuBandWords words (up to 16 a lane), their match masks read
// from a table of the shorter text's (256 characters x its 64-byte blocks, 32 bytes a
// byte of text), for shorter texts of at most kGpuTableText bytes. kBeyond: not within.
inline constexpr std::uint32_t kGpuNarrowEdits = 64 * 32 - 1;
inline constexpr int kGpuBandWords = 512;
inline constexpr std::uint32_t kGpuBandEdits = 64 * kGpuBandWords - 1;
inline constexpr std::uint64_t kGpuTableText = std::uint64_t{1} << 18;
inline constexpr std::uint32_t kBeyond = UINT32_MAX;

// The largest distance the GPU resolves for texts of lengths la and lb.
constexpr std::uint32_t gpu_band_edits(std::uint64_t la, std::uint64_t lb) {
  return (la < lb ? la : lb) <= kGpuTableText ? kGpuBandEdits : kGpuNarrowEdits;
}

// The edit distance of each pair of texts on CUDA device `device` (one warp a pair, the
// band widened from one word while the limit allows): the distance when it is at most
// min(limit, gpu_band_edits of the texts' lengths), else kBeyond. Text i is
// chars[offsets[i], offsets[i + 1]) in host memory. `device_ms`, when given, receives the
// kernels' time. Texts beyond `text_budget` bytes (0: half the device's free memory, at
// most 4 GiB) go to the device in chunks of pairs. A CPU-only build throws Failure.
std::vector<std::uint32_t> distances_within_gpu(const char* chars, const std::vector<std::uint64_t>& offsets,
                                                const std::vector<TextPair>& pairs, int device,
                                                double* device_ms = nullptr, std::size_t text_budget = 0);

// Texts sent to a GPU ahead of their pairs (the edit-rate pipeline sends its documents
// while it looks for candidates), freed on that GPU.
struct GpuTexts;
struct GpuTextsDeleter {
  void operator()(GpuTexts* texts) const;
};
using GpuTextsPtr = std::unique_ptr<GpuTexts, GpuTextsDeleter>;

// Sends `texts` (text i: texts[i]) to CUDA device `device`, gathered through pinned
// buffers; returns once they are there, or null when they pass `text_budget` (as above).
// A CPU-only build throws Failure.
GpuTextsPtr send_texts_to_gpu(const std::vector<std::string_view>& texts, int device, std::size_t text_budget = 0);

// distances_within_gpu for pairs of texts already on their GPU.
std::vector<std::uint32_t> distances_within_gpu(const GpuTexts& texts, const std::vector<TextPair>& pairs,
                                                double* device_ms = nullptr);

}  // namespace simkit::dedup
