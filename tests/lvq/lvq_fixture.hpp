// Shared by the LVQ tests: a float64 reference of one GLVQ batch, written from the
// formulas alone (no code shared with simkit's trainers), and the real digits sample.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "simkit/lvq.hpp"
#include "test_support.hpp"

namespace simkit::test {

// One batch of GLVQ over the samples `order` with step `eta`: distances from the
// prototypes at the batch start, then each sample's two updates applied in order.
// Returns the per-sample losses; `prototypes` (count x dims, double) is updated in place.
inline std::vector<double> reference_batch(const lvq::Dataset& data, std::size_t per_class,
                                           const std::vector<std::uint32_t>& order, double eta, double xi,
                                           std::vector<double>& prototypes) {
  const std::size_t dims = data.dims, count = prototypes.size() / dims;
  struct Pick {
    std::size_t c, r;
    double dc, dr;
  };
  std::vector<Pick> picks;
  std::vector<double> losses;
  for (const std::uint32_t row : order) {
    Pick p{0, 0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    for (std::size_t j = 0; j < count; ++j) {
      double d = 0;
      for (std::size_t t = 0; t < dims; ++t) {
        const double diff = data.features[row * dims + t] - prototypes[j * dims + t];
        d += diff * diff;
      }
      if (j / per_class == data.labels[row]) {
        if (d < p.dc) p.dc = d, p.c = j;
      } else if (d < p.dr) {
        p.dr = d, p.r = j;
      }
    }
    const double mu = (p.dc - p.dr) / (p.dc + p.dr);
    const double f = 1 / (1 + std::exp(-xi * mu));
    losses.push_back(f);
    picks.push_back(p);
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Pick& p = picks[i];
    const double sum = p.dc + p.dr;
    const double f = losses[i];
    const double dphi = xi * f * (1 - f);
    const double* x = nullptr;
    std::vector<double> xs(dims);
    for (std::size_t t = 0; t < dims; ++t) xs[t] = data.features[order[i] * dims + t];
    x = xs.data();
    for (std::size_t t = 0; t < dims; ++t) {
      prototypes[p.c * dims + t] += eta * dphi * (4 * p.dr / (sum * sum)) * (x[t] - prototypes[p.c * dims + t]);
      prototypes[p.r * dims + t] -= eta * dphi * (4 * p.dc / (sum * sum)) * (x[t] - prototypes[p.r * dims + t]);
    }
  }
  return losses;
}

inline lvq::Dataset digits(const char* part) {
  return lvq::read_dataset((source_dir() / "data/samples/digits" / (std::string(part) + ".csv")).string());
}

// A random labelled set: `classes` Gaussian-ish blobs in `dims` dimensions.
inline lvq::Dataset blobs(Random& random, std::size_t rows, std::size_t dims, std::size_t classes) {
  lvq::Dataset d;
  d.rows = rows;
  d.dims = dims;
  for (std::size_t c = 0; c < classes; ++c) d.classes.push_back(std::to_string(c));
  const std::vector<float> centres = random.floats(classes * dims, -3, 3);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint32_t c = static_cast<std::uint32_t>(r % classes);
    d.labels.push_back(c);
    for (std::size_t t = 0; t < dims; ++t) d.features.push_back(centres[c * dims + t] + random.uniform(-2, 2));
  }
  return d;
}

}  // namespace simkit::test
