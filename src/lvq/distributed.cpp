// Prediction over the workers of a run: every rank's GPUs (or each rank's CPU), numbered
// across the ranks, each classify a consecutive share of the rows; rank 0 gathers the
// classes in row order. The training loop's test passes share their rows the same way.
#include <algorithm>

#include "lvq/trainer.hpp"
#include "simkit/cluster.hpp"
#include "simkit/threads.hpp"

namespace simkit::lvq {

std::vector<int> detail::gpus(const TrainOptions& options) {
  if (options.device < 0) return {};
  return options.devices.empty() ? std::vector<int>{options.device} : options.devices;
}

detail::RowsClassified detail::nearest_classes_here(const Model& model, const Dataset& data, std::size_t top,
                                                    const std::vector<int>& gpus) {
  const std::size_t local = std::max<std::size_t>(gpus.size(), 1);
  const cluster::Parts parts = cluster::parts(local);
  const auto share = [&](std::size_t p) { return share_rows(data.rows, false, parts.first + p, parts.total); };
  std::vector<std::vector<std::uint32_t>> found(local);
  run_parts(local, [&](std::size_t p) {  // a thread a GPU
    if (share(p).size() > 0) found[p] = nearest_classes(model, data, share(p), top, gpus.empty() ? -1 : gpus[p]);
  });
  RowsClassified out{{share(0).begin, share(local - 1).end}, {}};
  for (const std::vector<std::uint32_t>& f : found) out.classes.insert(out.classes.end(), f.begin(), f.end());
  return out;
}

std::vector<std::uint32_t> predict_distributed(const Model& model, const Dataset& input, std::size_t top,
                                               const std::vector<int>& devices) {
  const Dataset* data = &input;
  Dataset scaled;
  if (!model.mean.empty()) {
    scaled = input;
    detail::standardise(model, scaled);
    data = &scaled;
  }
  detail::RowsClassified mine = detail::nearest_classes_here(model, *data, top, devices);
  if (cluster::size() == 1) return std::move(mine.classes);
  return cluster::gather_values<std::uint32_t>(mine.classes);  // in rank order: row order
}

}  // namespace simkit::lvq
