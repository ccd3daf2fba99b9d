// Match scores of CTPH signatures, as libfuzzy 2.14.1's fuzzy_compare computes them
// (see ctph.hpp): integer arithmetic in the same order, so scores are identical.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "simkit/ctph.hpp"

namespace simkit::ctph {

namespace {

constexpr std::size_t kCommonRun = 7;  // the parts must share a substring this long

struct Parsed {
  std::uint64_t block_size = 0;
  std::string first, second;  // runs of more than three equal characters cut to three
};

// Runs of more than three equal characters count as three.
std::string without_long_runs(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i)
    if (i < 3 || s[i] != s[i - 1] || s[i] != s[i - 2] || s[i] != s[i - 3]) out += s[i];
  return out;
}

// As libfuzzy reads a signature: the block size as strtoul reads it (leading blanks and a
// sign allowed, too large a number saturating), then ':', the first part, ':', and the
// second part up to a ',' or the end. A part longer than 64 characters once its runs
// are cut is malformed.
bool parse(std::string_view s, Parsed& out) {
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
  out.first = without_long_runs(s.substr(0, second_colon));
  out.second = without_long_runs(second);
  return out.first.size() <= kSignatureLength && out.second.size() <= kSignatureLength;
}

bool share_run(std::string_view a, std::string_view b) {
  if (a.size() < kCommonRun || b.size() < kCommonRun) return false;
  for (std::size_t i = 0; i + kCommonRun <= a.size(); ++i)
    if (b.find(a.substr(i, kCommonRun)) != std::string_view::npos) return true;
  return false;
}

// Insertions and deletions cost 1, a substitution 2.
std::uint32_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::uint32_t> row(b.size() + 1), next(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<std::uint32_t>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    next[0] = static_cast<std::uint32_t>(i);
    for (std::size_t j = 1; j <= b.size(); ++j)
      next[j] = std::min({row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] == b[j - 1] ? 0u : 2u)});
    std::swap(row, next);
  }
  return row[b.size()];
}

std::uint32_t score_parts(std::string_view a, std::string_view b, std::uint64_t block_size) {
  if (!share_run(a, b)) return 0;
  std::uint64_t score = edit_distance(a, b);
  score = score * kSignatureLength / (a.size() + b.size());
  score = 100 * score / kSignatureLength;
  if (score >= 100) return 0;
  score = 100 - score;
  // Small block sizes cannot vouch for a high score: cap it by what the signature covers.
  const std::uint64_t cap = block_size / kMinBlockSize * std::min(a.size(), b.size());
  return static_cast<std::uint32_t>(std::min(score, cap));
}

}  // namespace

int compare(std::string_view a, std::string_view b) {
  Parsed x, y;
  if (!parse(a, x) || !parse(b, y)) return -1;
  const std::uint64_t bx = x.block_size, by = y.block_size;
  // Block sizes must be equal or one double the other.
  if (bx != by && (bx > UINT64_MAX / 2 || bx * 2 != by) && (bx % 2 == 1 || bx / 2 != by)) return 0;
  if (bx == by && x.first == y.first && x.second == y.second) return 100;
  if (bx == by) return static_cast<int>(std::max(score_parts(x.first, y.first, bx), score_parts(x.second, y.second, bx * 2)));
  if (bx * 2 == by) return static_cast<int>(score_parts(x.second, y.first, by));
  return static_cast<int>(score_parts(x.first, y.second, bx));
}

}  // namespace simkit::ctph
