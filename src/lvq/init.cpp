// Starting prototypes: the class means (one prototype a class) or k-means within each
// class (k-means++ seeding from the seed, then Lloyd's iterations), all classes in
// parallel; and the optional standardisation fitted on the training set.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>

#include "lvq/trainer.hpp"
#include "simkit/error.hpp"

namespace simkit::lvq {

namespace {

double squared_distance(const float* a, const float* b, std::size_t dims) {
  double s = 0;
  for (std::size_t t = 0; t < dims; ++t) {
    const double d = static_cast<double>(a[t]) - b[t];
    s += d * d;
  }
  return s;
}

// k centres of the rows `members` (indices into data), written to out (k x dims).
void kmeans(const Dataset& data, const std::vector<std::uint32_t>& members, std::size_t k, std::uint64_t seed,
            float* out) {
  const std::size_t dims = data.dims;
  auto row = [&](std::uint32_t i) { return data.features.data() + std::size_t{i} * dims; };
  std::mt19937_64 rng(seed);
  // k-means++: the first centre uniformly, each next one with probability ~ D(x)^2.
  std::vector<double> nearest(members.size(), std::numeric_limits<double>::infinity());
  std::size_t pick = std::uniform_int_distribution<std::size_t>(0, members.size() - 1)(rng);
  for (std::size_t c = 0; c < k; ++c) {
    std::copy_n(row(members[pick]), dims, out + c * dims);
    double total = 0;
    for (std::size_t m = 0; m < members.size(); ++m) {
      nearest[m] = std::min(nearest[m], squared_distance(row(members[m]), out + c * dims, dims));
      total += nearest[m];
    }
    if (c + 1 == k) break;
    if (total <= 0) {  // every row sits on a centre: take the next rows in turn
      pick = (pick + 1) % members.size();
      continue;
    }
    double target = std::uniform_real_distribution<double>(0, total)(rng);
    pick = members.size() - 1;
    for (std::size_t m = 0; m < members.size(); ++m) {
      target -= nearest[m];
      if (target < 0 && nearest[m] > 0) {
        pick = m;
        break;
      }
    }
  }
  // Lloyd's iterations; a centre that loses every row stays where it is.
  std::vector<std::size_t> owner(members.size());
  std::vector<double> sums(k * dims);
  std::vector<std::size_t> sizes(k);
  for (int iteration = 0; iteration < 25; ++iteration) {
    bool moved = false;
    for (std::size_t m = 0; m < members.size(); ++m) {
      std::size_t best = 0;
      double best_d = std::numeric_limits<double>::infinity();
      for (std::size_t c = 0; c < k; ++c) {
        const double d = squared_distance(row(members[m]), out + c * dims, dims);
        if (d < best_d) best_d = d, best = c;
      }
      moved = moved || iteration == 0 || owner[m] != best;
      owner[m] = best;
    }
    if (!moved) break;
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(sizes.begin(), sizes.end(), 0);
    for (std::size_t m = 0; m < members.size(); ++m) {
      ++sizes[owner[m]];
      for (std::size_t t = 0; t < dims; ++t) sums[owner[m] * dims + t] += row(members[m])[t];
    }
    for (std::size_t c = 0; c < k; ++c)
      if (sizes[c] > 0)
        for (std::size_t t = 0; t < dims; ++t) out[c * dims + t] = static_cast<float>(sums[c * dims + t] / sizes[c]);
  }
}

}  // namespace

void detail::standardise(const Model& model, Dataset& data) {
  if (model.mean.empty()) return;
  tbb::parallel_for(std::size_t{0}, data.rows, [&](std::size_t r) {
    float* x = data.features.data() + r * data.dims;
    for (std::size_t t = 0; t < data.dims; ++t) x[t] = (x[t] - model.mean[t]) / model.scale[t];
  });
}

Model initial_model(const Dataset& raw, const TrainOptions& options) {
  if (!raw.labelled()) throw InputError(Location{}, "training needs labelled samples");
  if (raw.classes.size() < 2)
    throw InputError(Location{}, fmt::format("training needs at least 2 classes, the data has {}", raw.classes.size()));
  if (options.per_class == 0) throw UsageError("--prototypes-per-class must be at least 1");
  Model model;
  model.dims = raw.dims;
  model.per_class = options.per_class;
  model.classes = raw.classes;
  const Dataset* data = &raw;
  Dataset scaled;
  if (options.standardize) {
    std::vector<double> sum(raw.dims), sq(raw.dims);
    for (std::size_t r = 0; r < raw.rows; ++r)
      for (std::size_t t = 0; t < raw.dims; ++t) {
        const double v = raw.features[r * raw.dims + t];
        sum[t] += v;
        sq[t] += v * v;
      }
    model.mean.resize(raw.dims);
    model.scale.resize(raw.dims);
    for (std::size_t t = 0; t < raw.dims; ++t) {
      const double mean = sum[t] / raw.rows;
      const double var = std::max(0.0, sq[t] / raw.rows - mean * mean);
      model.mean[t] = static_cast<float>(mean);
      model.scale[t] = var > 0 ? static_cast<float>(std::sqrt(var)) : 1.0f;  // a constant feature stays 0
    }
    scaled = raw;
    detail::standardise(model, scaled);
    data = &scaled;
  }
  std::vector<std::vector<std::uint32_t>> members(raw.classes.size());
  for (std::size_t r = 0; r < raw.rows; ++r) members[raw.labels[r]].push_back(static_cast<std::uint32_t>(r));
  for (std::size_t c = 0; c < members.size(); ++c)
    if (members[c].size() < options.per_class)
      throw InputError(Location{}, fmt::format("class {} has {} sample{}, fewer than the {} prototypes a class asked for",
                                               quote(raw.classes[c]), members[c].size(),
                                               members[c].size() == 1 ? "" : "s", options.per_class));
  const bool use_kmeans = options.init == Init::kmeans || (options.init == Init::automatic && options.per_class > 1);
  model.prototypes.assign(model.count() * raw.dims, 0.0f);
  tbb::parallel_for(std::size_t{0}, members.size(), [&](std::size_t c) {
    float* out = model.prototypes.data() + c * options.per_class * raw.dims;
    if (use_kmeans) {
      kmeans(*data, members[c], options.per_class, options.seed * 1000003 + c, out);
      return;
    }
    std::vector<double> mean(raw.dims);
    for (const std::uint32_t r : members[c])
      for (std::size_t t = 0; t < raw.dims; ++t) mean[t] += data->features[std::size_t{r} * raw.dims + t];
    for (std::size_t p = 0; p < options.per_class; ++p)
      for (std::size_t t = 0; t < raw.dims; ++t) out[p * raw.dims + t] = static_cast<float>(mean[t] / members[c].size());
  });
  return model;
}

}  // namespace simkit::lvq
