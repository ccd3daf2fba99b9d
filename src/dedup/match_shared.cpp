// ssdeep-mode matching shared out among the run's workers (match_shared in
// simkit/dedup.hpp): each takes its share of the rows, the pairs come together on rank 0.
#include <algorithm>

#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/threads.hpp"

namespace simkit::dedup {

std::vector<Match> match_shared(const std::vector<ctph::Prepared>& signatures, int threshold,
                                const std::vector<int>& devices, Progress* progress, double* device_ms) {
  const cluster::Parts parts = cluster::parts(devices.empty() ? 1 : devices.size());
  std::vector<std::vector<Match>> found(parts.local);
  std::vector<double> ms(parts.local, 0);
  run_parts(parts.local, [&](std::size_t w) {
    const Share share{parts.first + w, parts.total};
    found[w] = devices.empty() ? match_all(signatures, threshold, progress, share)
                               : match_all_gpu(signatures, threshold, devices[w], &ms[w], share);
  });
  if (device_ms != nullptr) *device_ms = *std::max_element(ms.begin(), ms.end());
  std::vector<Match> mine;
  for (const auto& part : found) mine.insert(mine.end(), part.begin(), part.end());
  if (parts.total == 1) return mine;
  std::vector<Match> all = cluster::gather_values<Match>(mine);
  std::sort(all.begin(), all.end(), [](const Match& p, const Match& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; });
  return all;
}

}  // namespace simkit::dedup
