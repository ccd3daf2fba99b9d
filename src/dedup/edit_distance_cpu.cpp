// Levenshtein distances on the CPU: the two-row reference; Myers/Hyyrö bit vectors over
// 64-row blocks of the pattern, computed only where the band of diagonals that a limit
// leaves open crosses them; all pairs of short strings below an edit rate, on every core.
#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include "dedup/edit_detail.hpp"
#include "dedup/edit_distance.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

namespace {

using detail::advance_block;
using detail::kWordBits;

// Match masks of a pattern: bit r of eq(w, c) is set when pattern[64w + r] == c, for the
// blocks a band holds. The blocks live in a ring of `window` slots (a power of two), each
// slot 256 masks, loaded when the band reaches a block and cleared entry by entry when a
// later block takes its slot: a pattern costs O(its length) to prepare however long it
// is, memory grows with the band's width rather than the pattern's, and a narrow band's
// masks stay in cache. A table is reused from pattern to pattern (see with_masks).
class PatternMasks {
 public:
  void load(std::string_view pattern) {
    clear();
    pattern_.assign(pattern);
  }
  // Room for `blocks` consecutive blocks at once (at most the pattern's).
  void window(std::size_t blocks) {
    const std::size_t wanted = std::bit_ceil(std::max<std::size_t>(1, std::min(blocks, words())));
    if (wanted == window_) return;
    clear();
    window_ = wanted;
    if (masks_.size() < window_ * 256) masks_.resize(window_ * 256);
    owner_.assign(window_, -1);
  }
  // Makes block `word` present (it may evict the block `window` before it).
  void ensure(std::int64_t word) {
    std::int64_t& owner = owner_[static_cast<std::size_t>(word) & (window_ - 1)];
    if (owner == word) return;
    if (owner >= 0) set_block(owner, 0);
    owner = word;
    set_block(word, 1);
  }
  std::size_t words() const { return (pattern_.size() + kWordBits - 1) / kWordBits; }
  std::size_t bytes() const { return masks_.size() * sizeof(std::uint64_t) + pattern_.capacity(); }
  std::size_t length() const { return pattern_.size(); }
  std::uint64_t eq(std::int64_t word, char c) const {
    return masks_[(static_cast<std::size_t>(word) & (window_ - 1)) * 256 + static_cast<unsigned char>(c)];
  }

 private:
  // Sets (on = 1) or clears (on = 0) the masks of block `word`'s characters in its slot.
  void set_block(std::int64_t word, int on) {
    std::uint64_t* slot = masks_.data() + (static_cast<std::size_t>(word) & (window_ - 1)) * 256;
    const std::size_t begin = static_cast<std::size_t>(word) * kWordBits;
    const std::size_t end = std::min(pattern_.size(), begin + kWordBits);
    for (std::size_t i = begin; i < end; ++i) {
      std::uint64_t& mask = slot[static_cast<unsigned char>(pattern_[i])];
      mask = on ? mask | std::uint64_t{1} << (i - begin) : 0;
    }
  }
  void clear() {
    for (const std::int64_t owner : owner_)
      if (owner >= 0) set_block(owner, 0);
    std::fill(owner_.begin(), owner_.end(), -1);
  }
  std::string pattern_;
  std::size_t window_ = 0;
  std::vector<std::uint64_t> masks_;
  std::vector<std::int64_t> owner_;  // the block each slot holds, -1 for none
};

// Calls use(masks of `pattern`) with the calling thread's reused table. A table grown past
// 16 MiB (a full band of a long pattern, as edit_distance asks) is not kept.
template <typename Use>
auto with_masks(std::string_view pattern, Use&& use) {
  thread_local PatternMasks table;
  table.load(pattern);
  struct Trim {
    PatternMasks& table;
    ~Trim() {
      if (table.bytes() > (std::size_t{16} << 20)) table = PatternMasks{};
    }
  } trim{table};
  return use(table);
}

// One 64-row block of the DP column: its vertical deltas and the value at its last row.
struct Block {
  std::uint64_t pv = ~std::uint64_t{0}, mv = 0;
  std::int64_t score = 0;
};

// D[m][n] of the pattern (m rows) against the text (n columns) when it is at most k, else
// some value above k; needs |n - m| <= k and room for pattern.words() blocks. An alignment
// through cell (i, j) costs at least |j - i| + |(n - j) - (m - i)|, so only the diagonals
// -below <= j - i <= above matter; the blocks holding none of their cells in a column are
// skipped. Cells outside the band see made-up neighbours (+1 steps) that can only
// overstate them, so every cell of an alignment of cost <= k is still exact.
std::int64_t banded_distance(PatternMasks& pattern, std::string_view text, std::int64_t k, Block* blocks) {
  const auto m = static_cast<std::int64_t>(pattern.length());
  const auto n = static_cast<std::int64_t>(text.size());
  if (m == 0 || n == 0) return m + n;
  const std::int64_t above = (k + (n - m)) / 2, below = (k - (n - m)) / 2;
  const std::int64_t last_word = (m - 1) / kWordBits;
  const int last_bit = static_cast<int>((m - 1) % kWordBits);
  const auto last_row = [m](std::int64_t b) { return std::min(kWordBits * (b + 1), m); };
  // A column's blocks span at most (above + below) / 64 + 2 of them.
  pattern.window(static_cast<std::size_t>((above + below) / kWordBits + 2));
  pattern.ensure(0);

  std::int64_t last = 0;  // blocks [first, last] are computed in a column
  blocks[0] = Block{.score = last_row(0)};
  for (std::int64_t j = 1; j <= n; ++j) {
    // The band's lower end enters a new block: its rows start one step apart, below the
    // block above as the previous column left it.
    for (const std::int64_t needed = (std::min(m, j + below) - 1) / kWordBits; last < needed; ++last) {
      pattern.ensure(last + 1);
      blocks[last + 1] = Block{.score = blocks[last].score + last_row(last + 1) - last_row(last)};
    }
    const std::int64_t first = (std::max<std::int64_t>(1, j - above) - 1) / kWordBits;
    const char c = text[static_cast<std::size_t>(j - 1)];
    int h = 1;  // row 0 grows by one a column; above a skipped block, so do the made-up rows
    for (std::int64_t b = first; b <= last; ++b) {
      Block& block = blocks[b];
      h = advance_block(block.pv, block.mv, pattern.eq(b, c), h, b == last_word ? last_bit : kWordBits - 1);
      block.score += h;
    }
    // Ukkonen's cut-off: once every cell of a column exceeds k, so does the end of every
    // path through it. A block's cells are at least its last row's value less its +1
    // vertical steps; checked every 64 columns.
    if (j % 64 == 0 && k < n) {
      std::int64_t least = k + 1;
      for (std::int64_t b = first; b <= last && least > k; ++b)
        least = std::min(least, blocks[b].score - std::popcount(blocks[b].pv));
      if (least > k) return k + 1;
    }
  }
  return blocks[last_word].score;
}

// A lower bound of the distance from letter counts alone: an edit removes at most one
// letter and adds at most one, so d is at least the letters a has in excess of b, and
// those b has in excess of a. O(n), and it rules out most unrelated long documents (whose
// band would cost O(limit x n)) before any DP.
std::uint64_t letter_bound(std::string_view a, std::string_view b) {
  std::array<std::int64_t, 256> excess{};
  for (const char c : a) ++excess[static_cast<unsigned char>(c)];
  for (const char c : b) --excess[static_cast<unsigned char>(c)];
  std::uint64_t more = 0, fewer = 0;
  for (const std::int64_t e : excess) (e > 0 ? more : fewer) += static_cast<std::uint64_t>(e > 0 ? e : -e);
  return std::max(more, fewer);
}

// The shorter string first: fewer pattern words to compute.
std::pair<std::string_view, std::string_view> shorter_first(std::string_view a, std::string_view b) {
  return a.size() <= b.size() ? std::pair{a, b} : std::pair{b, a};
}

// Drops the common prefix and suffix: they cost nothing (some optimal alignment matches
// them), and versions of one file often share long ones.
void trim_common(std::string_view& a, std::string_view& b) {
  const std::size_t prefix = static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
  a.remove_prefix(prefix);
  b.remove_prefix(prefix);
  const std::size_t suffix = static_cast<std::size_t>(std::mismatch(a.rbegin(), a.rend(), b.rbegin(), b.rend()).first - a.rbegin());
  a.remove_suffix(suffix);
  b.remove_suffix(suffix);
}

// Every pair of row r of `block` that passes `rule`, in order of b, appended to `out`.
void pairs_of_row(const StringSet& strings, const PairBlock& block, std::uint32_t r, PairRule rule,
                  std::vector<EditPair>& out) {
  const std::uint32_t a = block.x + r;
  const std::string_view x = strings[a];
  with_masks(x, [&](PatternMasks& masks) {
    std::array<Block, detail::kMaxPairWords> blocks;
    for (std::uint32_t j = block.triangle ? r + 1 : 0; j < block.columns; ++j) {
      const std::string_view y = strings[block.y + j];
      if (!rule.lengths_can_pass(x.size(), y.size())) continue;
      const std::int64_t whole = static_cast<std::int64_t>(std::max(x.size(), y.size()));
      const auto d = static_cast<std::uint32_t>(banded_distance(masks, y, whole, blocks.data()));
      if (rule.passes(d, x.size(), y.size())) out.push_back(EditPair{a, block.y + j, d});
    }
  });
}

// xs against ys as one set: ys after xs unless they are the same; the pairs' b then
// counted from ys' first again.
template <typename Score>
std::vector<EditPair> pairs_of_two_sets(const StringSet& xs, const StringSet& ys, bool triangle, Score score) {
  const auto nx = static_cast<std::uint32_t>(xs.size()), ny = static_cast<std::uint32_t>(ys.size());
  if (triangle && &xs != &ys) throw UsageError("the pairs of a triangle come from one set of strings");
  if (&xs == &ys) return score(xs, std::vector<PairBlock>{{0, nx, 0, nx, triangle}});
  StringSet both = xs;
  both.add(ys);
  std::vector<EditPair> pairs = score(both, std::vector<PairBlock>{{0, nx, nx, ny, false}});
  for (EditPair& p : pairs) p.b -= nx;
  return pairs;
}

}  // namespace

namespace detail {

void check_pair_blocks(const StringSet& strings, const std::vector<PairBlock>& blocks) {
  for (std::size_t i = 0; i < strings.size(); ++i)
    if (strings[i].size() > kMaxPairString)
      throw InputError({}, fmt::format("string {} is {} bytes long; edit-distance pairs take strings of at most {}",
                                       i, strings[i].size(), kMaxPairString));
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const PairBlock& b = blocks[k];
    if (std::uint64_t{b.x} + b.rows > strings.size() || std::uint64_t{b.y} + b.columns > strings.size())
      throw UsageError(fmt::format("pair block {} (rows {}+{}, columns {}+{}) reaches past the {} strings", k, b.x,
                                   b.rows, b.y, b.columns, strings.size()));
    if (b.triangle && (b.x != b.y || b.rows != b.columns))
      throw UsageError(fmt::format("pair block {} is a triangle of rows {}+{} and columns {}+{}: they must be the same",
                                   k, b.x, b.rows, b.y, b.columns));
  }
}

void sort_pairs(std::vector<EditPair>& pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const EditPair& p, const EditPair& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; });
}

}  // namespace detail

std::uint32_t edit_distance_reference(std::string_view a, std::string_view b) {
  std::vector<std::uint32_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0u);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::uint32_t diagonal = row[0];
    row[0] = static_cast<std::uint32_t>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::uint32_t up = row[j];
      row[j] = std::min({diagonal + (a[i - 1] == b[j - 1] ? 0u : 1u), up + 1, row[j - 1] + 1});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::uint32_t edit_distance(std::string_view a, std::string_view b) {
  const auto ordered = shorter_first(a, b);
  const std::string_view pattern = ordered.first, text = ordered.second;  // not bindings: lambdas capture them
  return with_masks(pattern, [&](PatternMasks& masks) {
    std::vector<Block> blocks(masks.words());
    return static_cast<std::uint32_t>(banded_distance(masks, text, static_cast<std::int64_t>(text.size()), blocks.data()));
  });
}

std::optional<std::uint32_t> edit_distance_within(std::string_view a, std::string_view b, std::uint32_t limit) {
  trim_common(a, b);
  const auto ordered = shorter_first(a, b);
  const std::string_view pattern = ordered.first, text = ordered.second;  // not bindings: lambdas capture them
  const auto gap = static_cast<std::int64_t>(text.size() - pattern.size());
  if (gap > limit || letter_bound(a, b) > limit) return std::nullopt;
  // Ukkonen's doubling: a band for k costs O(k n), and most pairs verified lie far closer
  // than the limit, so bands grow from small until one holds the distance or the limit
  // is reached (at most twice the work of the full band when it is).
  const std::int64_t most = std::min<std::int64_t>(limit, static_cast<std::int64_t>(text.size()));
  return with_masks(pattern, [&](PatternMasks& masks) -> std::optional<std::uint32_t> {
    std::vector<Block> blocks(masks.words());
    for (std::int64_t k = std::min(most, std::max<std::int64_t>(2 * gap, 64));; k = std::min(most, 2 * k)) {
      const std::int64_t d = banded_distance(masks, text, k, blocks.data());
      if (d <= k) return static_cast<std::uint32_t>(d);
      if (k == most) return std::nullopt;
    }
  });
}

std::optional<std::uint32_t> distance_in_diagonal_band(std::string_view a, std::string_view b, std::uint32_t limit,
                                                       int words) {
  // Word for word what the GPU kernels' lanes do (dedup/cuda/verify_pairs.cu), the lanes'
  // words in order.
  if (words < 1 || words > kGpuBandWords)
    throw UsageError(fmt::format("a diagonal band holds 1..{} words, not {}", kGpuBandWords, words));
  trim_common(a, b);
  const auto [pattern, text] = shorter_first(a, b);
  const auto m = static_cast<std::int64_t>(pattern.size()), n = static_cast<std::int64_t>(text.size());
  const std::int64_t bits = std::int64_t{kWordBits} * words;
  const std::int64_t k = std::min<std::int64_t>(limit, bits - 1), gap = n - m;
  if (gap > k) return std::nullopt;
  if (m == 0) return static_cast<std::uint32_t>(n);
  const std::int64_t above = detail::band_above(bits, gap);
  const auto w_count = static_cast<std::size_t>(words);
  std::vector<std::uint64_t> pv(w_count), mv(w_count), eq(w_count), xv(w_count), ph(w_count), mh(w_count), sum(w_count);
  for (std::size_t w = 0; w < w_count; ++w) {
    // Rows <= 0 (bits r <= above) step -1 downwards, real rows +1.
    const std::int64_t first = std::int64_t{kWordBits} * static_cast<std::int64_t>(w);
    const std::int64_t made_up = std::clamp<std::int64_t>(above - first + 1, 0, kWordBits);
    mv[w] = made_up == kWordBits ? ~std::uint64_t{0} : (std::uint64_t{1} << made_up) - 1;
    pv[w] = ~mv[w];
  }
  std::int64_t top = above;  // D at the window's top row
  const std::pair<std::int64_t, std::int64_t> k_rows = detail::band_bits_within(above, gap, k);
  for (std::int64_t j = 1; j <= n; ++j) {
    const char c = text[static_cast<std::size_t>(j - 1)];
    for (std::size_t w = 0; w < w_count; ++w) {  // down one row: the bottom row enters with a +1 step
      const std::uint64_t pv_in = w + 1 < w_count ? pv[w + 1] & 1 : 1, mv_in = w + 1 < w_count ? mv[w + 1] & 1 : 0;
      pv[w] = (pv[w] >> 1) | pv_in << 63;
      mv[w] = (mv[w] >> 1) | mv_in << 63;
      eq[w] = 0;
      for (int r = 0; r < kWordBits; ++r) {
        const std::int64_t row = j - above + std::int64_t{kWordBits} * static_cast<std::int64_t>(w) + r;
        if (row >= 1 && row <= m && pattern[static_cast<std::size_t>(row - 1)] == c) eq[w] |= std::uint64_t{1} << r;
      }
    }
    std::uint64_t carry = 0;  // the addition (eq & pv) + pv over the whole band
    for (std::size_t w = 0; w < w_count; ++w) {
      const std::uint64_t x = eq[w] & pv[w], part = x + pv[w];
      sum[w] = part + carry;
      carry = (part < x || sum[w] < part) ? 1 : 0;
    }
    for (std::size_t w = 0; w < w_count; ++w) {
      xv[w] = eq[w] | mv[w];
      const std::uint64_t xh = (sum[w] ^ pv[w]) | eq[w];
      ph[w] = mv[w] | ~(xh | pv[w]);
      mh[w] = pv[w] & xh;
    }
    for (std::size_t w = w_count; w-- > 0;) {  // up one bit: the row above the window steps +1
      ph[w] = (ph[w] << 1) | (w > 0 ? ph[w - 1] >> 63 : 1);
      mh[w] = (mh[w] << 1) | (w > 0 ? mh[w - 1] >> 63 : 0);
      pv[w] = mh[w] | ~(xv[w] | ph[w]);
      mv[w] = ph[w] & xv[w];
    }
    top += 1 + static_cast<std::int64_t>(pv[0] & 1) - static_cast<std::int64_t>(mv[0] & 1);
    if (j % 32 == 0) {  // Ukkonen's cut-off: every cell of the diagonals that matter above k
      std::int64_t least = top;
      for (std::size_t w = 0; w < w_count; ++w) {
        const std::int64_t first = std::int64_t{kWordBits} * static_cast<std::int64_t>(w);
        least += detail::band_bound_part(pv[w], mv[w], first, k_rows.first, k_rows.second);
      }
      if (least > k) return std::nullopt;
    }
  }
  // Row m is bit above - gap: the steps of bits 1 .. that one added to the top.
  std::int64_t d = top;
  for (std::size_t w = 0; w < w_count; ++w) {
    const std::int64_t first = std::int64_t{kWordBits} * static_cast<std::int64_t>(w);
    d += detail::band_bound_part(pv[w], mv[w], first, above - gap, above - gap);
  }
  if (d > k) return std::nullopt;
  return static_cast<std::uint32_t>(d);
}

const char* kernel_name(EditKernel kernel) {
  switch (kernel) {
    case EditKernel::shared_rows: return "shared_rows";
    case EditKernel::global_rows: return "global_rows";
    case EditKernel::bit_parallel: return "bit_parallel";
  }
  return "unknown";
}

std::vector<EditPair> edit_pairs_cpu(const StringSet& strings, const std::vector<PairBlock>& blocks, PairRule rule) {
  detail::check_pair_blocks(strings, blocks);
  // Every block's rows numbered one after another, a task a row.
  std::vector<std::uint64_t> first_row(blocks.size() + 1, 0);
  for (std::size_t k = 0; k < blocks.size(); ++k) first_row[k + 1] = first_row[k] + blocks[k].rows;
  tbb::enumerable_thread_specific<std::vector<EditPair>> found;
  tbb::parallel_for(std::uint64_t{0}, first_row.back(), [&](std::uint64_t row) {
    const auto k = static_cast<std::size_t>(std::upper_bound(first_row.begin(), first_row.end(), row) - first_row.begin() - 1);
    pairs_of_row(strings, blocks[k], static_cast<std::uint32_t>(row - first_row[k]), rule, found.local());
  });
  std::vector<EditPair> all;
  for (auto& part : found) all.insert(all.end(), part.begin(), part.end());
  detail::sort_pairs(all);
  return all;
}

std::vector<EditPair> edit_pairs_cpu(const StringSet& xs, const StringSet& ys, bool triangle, PairRule rule) {
  return pairs_of_two_sets(xs, ys, triangle, [&](const StringSet& strings, const std::vector<PairBlock>& blocks) {
    return edit_pairs_cpu(strings, blocks, rule);
  });
}

std::vector<EditPair> edit_pairs_gpu(const StringSet& xs, const StringSet& ys, bool triangle, PairRule rule,
                                     EditKernel kernel, int device, double* device_ms, PairOrder order) {
  return pairs_of_two_sets(xs, ys, triangle, [&](const StringSet& strings, const std::vector<PairBlock>& blocks) {
    return edit_pairs_gpu(strings, blocks, rule, kernel, device, device_ms, order);
  });
}

}  // namespace simkit::dedup
