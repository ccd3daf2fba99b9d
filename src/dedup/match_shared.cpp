// ssdeep-mode matching shared out among the run's workers (match_shared in
// simkit/dedup.hpp): each takes its share of the rows, the pairs come together on rank 0.
#include <algorithm>
#include <span>

#include <oneapi/tbb/parallel_for.h>

#include "dedup/match_gpu.hpp"
#include "dedup/sorted_runs.hpp"
#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/threads.hpp"

namespace simkit::dedup {

namespace {

bool by_pair(const Match& p, const Match& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; }

// x and y merged into out: x cut into pieces, y cut where each piece's first match would
// go, the pieces merged at once.
void merge_two(std::span<const Match> x, std::span<const Match> y, Match* out) {
  if (x.empty() || y.empty()) {
    std::copy(y.begin(), y.end(), std::copy(x.begin(), x.end(), out));
    return;
  }
  const std::size_t total = x.size() + y.size();
  const std::size_t pieces = std::clamp<std::size_t>(total / (1 << 16), 1, 4 * max_threads());
  const auto cut_y = [&](std::size_t piece) -> std::size_t {
    if (piece == 0) return 0;
    if (piece == pieces) return y.size();
    const Match& first = x[x.size() * piece / pieces];
    return static_cast<std::size_t>(std::lower_bound(y.begin(), y.end(), first, by_pair) - y.begin());
  };
  tbb::parallel_for(std::size_t{0}, pieces, [&](std::size_t piece) {
    const std::size_t x0 = x.size() * piece / pieces, x1 = x.size() * (piece + 1) / pieces;
    const std::size_t y0 = cut_y(piece), y1 = cut_y(piece + 1);
    std::merge(x.begin() + x0, x.begin() + x1, y.begin() + y0, y.begin() + y1, out + x0 + y0, by_pair);
  });
}

}  // namespace

std::vector<Match> merge_sorted_runs(std::vector<std::vector<Match>> runs) {
  std::erase_if(runs, [](const std::vector<Match>& run) { return run.empty(); });
  if (runs.empty()) return {};
  if (runs.size() == 1) return std::move(runs[0]);
  if (runs.size() == 2) {  // (two workers: merged straight into the answer, no copy first)
    std::vector<Match> all(runs[0].size() + runs[1].size());
    merge_two(runs[0], runs[1], all.data());
    return all;
  }
  std::vector<Match> all;
  std::vector<std::size_t> ends;
  for (std::vector<Match>& run : runs) {
    all.insert(all.end(), run.begin(), run.end());
    run = {};
    ends.push_back(all.size());
  }
  return merge_sorted_runs(std::move(all), ends);
}

std::vector<Match> merge_sorted_runs(std::vector<Match> all, const std::vector<std::size_t>& ends) {
  // Neighbouring runs merged in pairs, from `all` into `other` and back, until one is left:
  // twice the matches' memory at most.
  std::vector<std::size_t> bounds = {0};
  for (const std::size_t end : ends)
    if (end > bounds.back()) bounds.push_back(end);
  std::vector<Match> other;
  while (bounds.size() > 2) {
    other.resize(all.size());
    std::vector<std::size_t> next = {0};
    for (std::size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const std::span<const Match> x(all.data() + bounds[r], bounds[r + 1] - bounds[r]);
      const std::size_t y_end = r + 2 < bounds.size() ? bounds[r + 2] : bounds[r + 1];  // an odd run alone
      merge_two(x, std::span<const Match>(all.data() + bounds[r + 1], y_end - bounds[r + 1]), other.data() + bounds[r]);
      next.push_back(y_end);
    }
    all.swap(other);
    bounds = std::move(next);
  }
  return all;
}

std::vector<Match> match_shared(const std::vector<ctph::Prepared>& signatures, int threshold,
                                const std::vector<int>& devices, Progress* progress, double* device_ms) {
  const cluster::Parts parts = cluster::parts(devices.empty() ? 1 : devices.size());
  std::vector<std::vector<Match>> found(parts.local);
  std::vector<double> ms(parts.local, 0);
  // Every GPU worker takes the same path (the index, or every pair scored), or their
  // shares of the rows would not tile: the index only where it can be built and fits
  // every worker's device. Its host part is made once, for all of this process's workers.
  bool index = !devices.empty();
  for (std::size_t w = 0; index && w < parts.local; ++w) index = index_fits_gpu(signatures, devices[w]);
  std::shared_ptr<const IndexPlan> plan = index ? plan_index(signatures) : nullptr;
  index = plan != nullptr;
  if (parts.total > 1 && !devices.empty()) index = cluster::min(index ? 1 : 0) == 1;
  if (!index) plan = nullptr;  // (every pair scored: the plan's memory back first)
  run_parts(parts.local, [&](std::size_t w) {
    const Share share{parts.first + w, parts.total};
    if (devices.empty()) found[w] = match_all(signatures, threshold, progress, share);
    else if (index) found[w] = match_indexed_gpu(*plan, threshold, devices[w], &ms[w], share);
    else found[w] = match_every_pair_gpu(signatures, threshold, devices[w], &ms[w], share);
  });
  plan = nullptr;
  if (device_ms != nullptr) *device_ms = *std::max_element(ms.begin(), ms.end());
  // Each worker's matches are sorted (a pair is one worker's): merged here, then across ranks.
  std::vector<Match> mine = merge_sorted_runs(std::move(found));
  if (cluster::size() == 1) return mine;
  const std::vector<std::uint64_t> sizes = cluster::gather_values<std::uint64_t>(std::vector<std::uint64_t>{mine.size()});
  std::vector<Match> all = cluster::gather_values<Match>(mine);
  std::vector<std::size_t> ends;
  for (const std::uint64_t size : sizes) ends.push_back((ends.empty() ? 0 : ends.back()) + size);
  return merge_sorted_runs(std::move(all), ends);
}

}  // namespace simkit::dedup
