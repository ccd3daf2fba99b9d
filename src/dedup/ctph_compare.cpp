// Match scores of CTPH signatures, as libfuzzy 2.14.1's fuzzy_compare computes them
// (see ctph.hpp): integer arithmetic in the same order, so scores are identical.
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <string>

#include "dedup/ctph_score.hpp"
#include "simkit/ctph.hpp"

namespace simkit::ctph {

namespace {

constexpr std::size_t kCommonRun = 7;  // the parts must share a substring this long

// Runs of more than three equal characters count as three.
std::string without_long_runs(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i)
    if (i < 3 || s[i] != s[i - 1] || s[i] != s[i - 2] || s[i] != s[i - 3]) out += s[i];
  return out;
}

// The part's 7-character substrings, packed 8 bits a character and sorted, and their summary.
void add_runs(Prepared::Part& part) {
  const std::string& t = part.text;
  part.runs.clear();
  part.summary = 0;
  if (t.size() < kCommonRun) return;
  part.runs.reserve(t.size() + 1 - kCommonRun);
  constexpr std::uint64_t kSevenBytes = (std::uint64_t{1} << (8 * kCommonRun)) - 1;
  std::uint64_t packed = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    packed = (packed << 8 | static_cast<unsigned char>(t[i])) & kSevenBytes;
    if (i + 1 < kCommonRun) continue;
    part.runs.push_back(packed);
    part.summary |= std::uint64_t{1} << ((packed * 0x9E3779B97F4A7C15ull) >> 58);
  }
  std::sort(part.runs.begin(), part.runs.end());
}

Prepared::Part prepare_part(std::string_view text, Substrings substrings) {
  Prepared::Part part{without_long_runs(text), {}, 0};
  if (substrings == Substrings::made) add_runs(part);
  return part;
}

// Whether the parts share a 7-character substring: the summaries first, then the sets.
bool share_run(const Prepared::Part& a, const Prepared::Part& b) {
  if ((a.summary & b.summary) == 0) return false;
  auto i = a.runs.begin(), j = b.runs.begin();
  while (i != a.runs.end() && j != b.runs.end()) {
    if (*i == *j) return true;
    if (*i < *j) ++i; else ++j;
  }
  return false;
}

// Insertions and deletions cost 1, a substitution 2 (libfuzzy's weights): as a
// substitution costs a deletion and an insertion, the distance is la + lb - 2 LCS. The
// LCS bit-parallel (Hyyro), one 64-bit word for a part of at most 64 characters, as the
// GPU's matchers compute it: about 64 steps where the table took 64 x 64 cells.
std::uint32_t edit_distance(std::string_view a, std::string_view b) {
  std::uint64_t mask[256] = {};  // bit i of mask[c]: a[i] == c
  for (std::size_t i = 0; i < a.size(); ++i) mask[static_cast<unsigned char>(a[i])] |= std::uint64_t{1} << i;
  std::uint64_t v = ~std::uint64_t{0};
  for (const char c : b) {
    const std::uint64_t u = v & mask[static_cast<unsigned char>(c)];
    v = (v + u) | (v - u);
  }
  const std::uint64_t in_a = a.size() >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << a.size()) - 1;
  const auto common = static_cast<std::uint32_t>(std::popcount(~v & in_a));
  return static_cast<std::uint32_t>(a.size() + b.size()) - 2 * common;
}

std::uint32_t score_parts(const Prepared::Part& pa, const Prepared::Part& pb, std::uint64_t block_size) {
  const std::string_view a = pa.text, b = pb.text;
  if (a.size() > kSignatureLength || b.size() > kSignatureLength || !share_run(pa, pb)) return 0;
  return detail::part_score(edit_distance(a, b), a.size(), b.size(), block_size);
}

}  // namespace

// As libfuzzy reads a signature: the block size as strtoul reads it (leading blanks and a
// sign allowed, too large a number saturating), then ':', the first part, ':', and the
// second part up to a ',' or the end. A part longer than 64 characters once its runs
// are cut is malformed.
bool prepare(std::string_view s, Prepared& out, Substrings substrings) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string head(s.substr(0, colon));
  char* end = nullptr;
  out.block_size = std::strtoull(head.c_str(), &end, 10);
  if (end == head.c_str() || end != head.c_str() + head.size()) return false;
  s.remove_prefix(colon + 1);
  const std::size_t second_colon = s.find(':');
  if (second_colon == std::string_view::npos) return false;
  std::string_view second = s.substr(second_colon + 1);
  second = second.substr(0, second.find(','));
  out.first = prepare_part(s.substr(0, second_colon), substrings);
  out.second = prepare_part(second, substrings);
  return out.first.text.size() <= kSignatureLength && out.second.text.size() <= kSignatureLength;
}

void add_substrings(Prepared& prepared) {
  add_runs(prepared.first);
  add_runs(prepared.second);
}

bool has_substrings(const Prepared& prepared) {
  return (prepared.first.text.size() < kCommonRun || !prepared.first.runs.empty()) &&
         (prepared.second.text.size() < kCommonRun || !prepared.second.runs.empty());
}

int compare(const Prepared& x, const Prepared& y) {
  const std::uint64_t bx = x.block_size, by = y.block_size;
  // Block sizes must be equal or one double the other.
  if (bx != by && (bx > UINT64_MAX / 2 || bx * 2 != by) && (bx % 2 == 1 || bx / 2 != by)) return 0;
  if (bx == by && x.first.text == y.first.text && x.second.text == y.second.text) return 100;
  if (bx == by)
    return static_cast<int>(std::max(score_parts(x.first, y.first, bx), score_parts(x.second, y.second, bx * 2)));
  if (bx * 2 == by) return static_cast<int>(score_parts(x.second, y.first, by));
  return static_cast<int>(score_parts(x.first, y.second, bx));
}

int compare(std::string_view a, std::string_view b) {
  Prepared x, y;
  if (!prepare(a, x) || !prepare(b, y)) return -1;
  return compare(x, y);
}

}  // namespace simkit::ctph
