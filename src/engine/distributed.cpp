// How the pairwise engine's work is shared out among processes and GPUs, and how the
// shares' results come back together (simkit/pairwise.hpp; the processes in cluster.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>

#include "core/packing.hpp"
#include "engine/pairwise_common.hpp"
#include "simkit/cluster.hpp"
#include "simkit/pairwise.hpp"

namespace simkit {

namespace {

// Pairs of rows [0, r) of a symmetric job over n rows: row i meets n - i rows.
double pairs_before(double r, double n) { return r * n - r * (r - 1) / 2; }

// The first row at which the pairs before reach `target` (symmetric), by bisection on
// whole rows: exact and monotone, so neighbouring shares meet without gap or overlap.
std::size_t row_with_pairs(std::size_t n, double target) {
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (pairs_before(static_cast<double>(mid), static_cast<double>(n)) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

std::string serialise(const TopKLists& lists) {
  detail::Packer out;
  out.value(static_cast<std::uint64_t>(lists.rows));
  out.value(static_cast<std::uint64_t>(lists.k));
  out.vector(lists.scores);
  out.vector(lists.indices);
  return std::move(out.bytes());
}

TopKLists deserialise(std::string_view bytes) {
  detail::Unpacker in(bytes);
  TopKLists lists;
  lists.rows = in.value<std::uint64_t>();
  lists.k = in.value<std::uint64_t>();
  lists.scores = in.vector<float>();
  lists.indices = in.vector<std::uint32_t>();
  return lists;
}

}  // namespace

RowRange share_rows(std::size_t rows, bool symmetric, std::size_t part, std::size_t parts) {
  parts = std::max<std::size_t>(parts, 1);
  part = std::min(part, parts - 1);
  if (!symmetric) return {rows * part / parts, rows * (part + 1) / parts};
  const double total = pairs_before(static_cast<double>(rows), static_cast<double>(rows));
  const auto bound = [&](std::size_t p) {
    return p == 0 ? 0 : p == parts ? rows : row_with_pairs(rows, total * static_cast<double>(p) / static_cast<double>(parts));
  };
  return {bound(part), bound(part + 1)};
}

std::vector<RowRange> share_blocks(std::size_t rows, std::size_t unit, Share share) {
  const std::size_t parts = std::max<std::size_t>(share.parts, 1), part = std::min(share.part, parts - 1);
  unit = std::max<std::size_t>(unit, 1);
  constexpr std::size_t kSmallestUnit = 128, kRangesEach = 4;
  while (unit > kSmallestUnit && (rows + unit - 1) / unit < kRangesEach * parts) unit /= 2;
  std::vector<RowRange> mine;
  for (std::size_t r = 0; r * unit < rows; ++r) {
    const std::size_t round = r / parts, seat = r % parts;
    if ((round % 2 == 0 ? seat : parts - 1 - seat) == part) mine.push_back({r * unit, std::min(rows, (r + 1) * unit)});
  }
  return mine;
}

TopKLists gather_topk(TopKLists mine) {
  if (cluster::size() == 1) return mine;
  const std::vector<std::string> parts = cluster::gather(serialise(mine));
  if (!cluster::root()) return {};
  TopKLists merged;
  for (const std::string& part : parts) {
    TopKLists lists = deserialise(part);
    if (merged.rows == 0 && merged.k == 0) merged = std::move(lists);
    else merge_topk(merged, lists);
  }
  return merged;
}

PairwiseResult gather_results(PairwiseResult mine) {
  if (cluster::size() == 1) return mine;
  PairwiseResult out;
  out.topk = gather_topk(std::move(mine.topk));
  out.pairs = cluster::gather_values<ScoredPair>(mine.pairs);
  detail::sort_pairs(out.pairs);
  const std::vector<std::uint64_t> blocks = cluster::gather_values<std::uint64_t>(std::vector<std::uint64_t>{mine.blocks});
  for (const std::uint64_t b : blocks) out.blocks += b;
  out.fused = mine.fused;
  return out;
}

}  // namespace simkit
