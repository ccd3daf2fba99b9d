// ssdeep-mode matching shared out among the run's workers (match_shared in
// simkit/dedup.hpp): each takes its share of the rows, the pairs come together on rank 0.
#include <algorithm>

#include <oneapi/tbb/parallel_sort.h>

#include "dedup/match_gpu.hpp"
#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/threads.hpp"

namespace simkit::dedup {

std::vector<Match> match_shared(const std::vector<ctph::Prepared>& signatures, int threshold,
                                const std::vector<int>& devices, Progress* progress, double* device_ms) {
  const cluster::Parts parts = cluster::parts(devices.empty() ? 1 : devices.size());
  std::vector<std::vector<Match>> found(parts.local);
  std::vector<double> ms(parts.local, 0);
  // Every GPU worker takes the same path (the index, or every pair scored), or their
  // shares of the rows would not tile: the index only where it fits every worker's device.
  bool index = !devices.empty();
  for (std::size_t w = 0; index && w < parts.local; ++w) index = index_fits_gpu(signatures, devices[w]);
  if (parts.total > 1 && !devices.empty()) index = cluster::min(index ? 1 : 0) == 1;
  run_parts(parts.local, [&](std::size_t w) {
    const Share share{parts.first + w, parts.total};
    if (devices.empty()) {
      found[w] = match_all(signatures, threshold, progress, share);
      return;
    }
    // No index for these signatures is the same answer on every worker.
    std::optional<std::vector<Match>> indexed;
    if (index) indexed = match_indexed_gpu(signatures, threshold, devices[w], &ms[w], share);
    found[w] = indexed ? std::move(*indexed) : match_every_pair_gpu(signatures, threshold, devices[w], &ms[w], share);
  });
  if (device_ms != nullptr) *device_ms = *std::max_element(ms.begin(), ms.end());
  std::vector<Match> mine;
  for (const auto& part : found) mine.insert(mine.end(), part.begin(), part.end());
  if (parts.total == 1) return mine;
  std::vector<Match> all = cluster::gather_values<Match>(mine);
  tbb::parallel_sort(all.begin(), all.end(), [](const Match& p, const Match& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; });
  return all;
}

}  // namespace simkit::dedup
