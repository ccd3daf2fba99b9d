#include "engine/pairwise_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "simkit/error.hpp"

namespace simkit::detail {

void validate(const PairwiseJob& job) {
  constexpr std::size_t kMaxRows = std::numeric_limits<std::uint32_t>::max() - 1;
  if (job.rows_a > kMaxRows || job.rows_b > kMaxRows)
    throw UsageError(fmt::format("pairwise: {} x {} rows exceed the limit of {} rows", job.rows_a,
                                 job.rows_b, kMaxRows));
  if (job.symmetric && job.rows_a != job.rows_b)
    throw UsageError("pairwise: a symmetric job needs the same rows on both sides");
  if (job.threshold && std::isnan(*job.threshold))
    throw UsageError("pairwise: the threshold must be a number");
  std::size_t after = 0;  // where the last range ended
  for (const RowRange& r : job.a_rows.value_or(std::vector<RowRange>{})) {
    if (r.begin > r.end || r.end > job.rows_a)
      throw UsageError(fmt::format("pairwise: rows {}..{} of A are not within its {} rows", r.begin, r.end,
                                   job.rows_a));
    if (r.begin < after)
      throw UsageError(fmt::format("pairwise: rows {}..{} of A come before the end of the range before ({})",
                                   r.begin, r.end, after));
    after = r.end;
  }
}

BlockSizes block_sizes(const PairwiseJob& job, std::size_t tile_elements, std::size_t preferred_a) {
  tile_elements = std::max<std::size_t>(tile_elements, 1);
  BlockSizes sizes;
  if (job.symmetric) {
    auto side = static_cast<std::size_t>(std::sqrt(static_cast<double>(tile_elements)));
    if (side >= 256) side -= side % 128;  // whole 128-row tiles for the products' kernels
    sizes.a = sizes.b = std::clamp<std::size_t>(side, 1, std::max<std::size_t>(job.rows_a, 1));
    return sizes;
  }
  sizes.a = std::min({std::max<std::size_t>(job.rows_a, 1), std::max<std::size_t>(preferred_a, 1),
                      tile_elements});
  sizes.b = std::clamp<std::size_t>(tile_elements / sizes.a, 1, std::max<std::size_t>(job.rows_b, 1));
  return sizes;
}

std::vector<std::pair<RowRange, RowRange>> block_pairs(const PairwiseJob& job, BlockSizes sizes) {
  std::vector<std::pair<RowRange, RowRange>> out;
  const std::vector<RowRange> all{RowRange{0, job.rows_a}};
  for (const RowRange& rows : job.a_rows ? *job.a_rows : all)
    for (std::size_t a = rows.begin; a < rows.end; a += sizes.a) {
      const RowRange ra{a, std::min(rows.end, a + sizes.a)};
      for (std::size_t b = job.symmetric ? a : 0; b < job.rows_b; b += sizes.b)
        out.push_back({ra, RowRange{b, std::min(job.rows_b, b + sizes.b)}});
    }
  return out;
}

void sort_pairs(std::vector<ScoredPair>& pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const ScoredPair& x, const ScoredPair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
}

}  // namespace simkit::detail
