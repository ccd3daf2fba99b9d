// Shared by the CCA tests: real and synthetic streams, an independent float64 batch CCA
// of a window (inverse square roots and an SVD: no code shared with the tracker's
// Cholesky path), and a helper that runs a tracker over a stream.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "simkit/cca.hpp"
#include "test_support.hpp"

namespace simkit::test {

// The digits sample as a stream of tuples: the left 4 columns of each 8 x 8 image (32
// values) beside the right 4 (32 values), in file order.
inline std::vector<double> digit_halves(std::size_t& count) {
  std::ifstream in(source_dir() / "data/samples/digits/train.csv");
  if (!in) throw std::runtime_error("cannot read " + (source_dir() / "data/samples/digits/train.csv").string());
  std::vector<double> out;
  std::string line;
  count = 0;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string field;
    std::vector<double> pixels;
    std::getline(fields, field, ',');  // the label
    while (std::getline(fields, field, ',')) pixels.push_back(std::stod(field));
    for (int half = 0; half < 2; ++half)
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 4; ++c) out.push_back(pixels[r * 8 + half * 4 + c]);
    ++count;
  }
  return out;
}

// The seed's linear data set DS_L: X and Y linear in a few shared latent factors, plus
// normal noise of mean 10 and variance 10.
inline std::vector<double> linear_stream(Random& random, std::size_t count, std::size_t p, std::size_t q,
                                         std::size_t factors = 4) {
  std::normal_distribution<double> normal(0.0, 1.0), noise(10.0, std::sqrt(10.0));
  std::vector<double> load((p + q) * factors);
  for (double& v : load) v = 2 * normal(random.engine());
  std::vector<double> out(count * (p + q));
  for (std::size_t t = 0; t < count; ++t) {
    std::vector<double> z(factors);
    for (double& v : z) v = normal(random.engine());
    for (std::size_t c = 0; c < p + q; ++c) {
      double v = noise(random.engine());
      for (std::size_t f = 0; f < factors; ++f) v += load[c * factors + f] * z[f];
      out[t * (p + q) + c] = v;
    }
  }
  return out;
}

// Canonical correlations of rows [first, first + n) of a stream (tuples d wide, X the
// first p columns, Y the next q) by the textbook route: S11^-1/2 S12 S22^-1/2, SVD.
inline std::vector<double> batch_cca(const std::vector<double>& stream, std::size_t d, std::size_t first,
                                     std::size_t n, std::size_t p, std::size_t q, double ridge, std::size_t k,
                                     std::size_t x_at = 0, std::size_t y_at = std::size_t(-1)) {
  if (y_at == std::size_t(-1)) y_at = x_at + p;
  Eigen::MatrixXd x(n, p), y(n, q);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < p; ++c) x(i, c) = stream[(first + i) * d + x_at + c];
    for (std::size_t c = 0; c < q; ++c) y(i, c) = stream[(first + i) * d + y_at + c];
  }
  x.rowwise() -= x.colwise().mean();
  y.rowwise() -= y.colwise().mean();
  Eigen::MatrixXd s11 = x.transpose() * x / double(n - 1), s22 = y.transpose() * y / double(n - 1);
  const Eigen::MatrixXd s12 = x.transpose() * y / double(n - 1);
  s11.diagonal().array() += ridge;
  s22.diagonal().array() += ridge;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> e1(s11), e2(s22);
  const Eigen::MatrixXd m = e1.operatorInverseSqrt() * s12 * e2.operatorInverseSqrt();
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(m);
  std::vector<double> out;
  for (std::size_t j = 0; j < k; ++j) out.push_back(svd.singularValues()[j]);
  return out;
}

// A stream of p + q columns whose Y column 3 holds small integers (0 first, so that
// column's moments stay exact integers) until tuple 500 and zeros after: with a window of
// 80 the window ending at tuple 580 is the first whose Y covariance is singular.
inline std::vector<double> stream_turning_singular(Random& random, std::size_t p, std::size_t q) {
  std::vector<double> stream = linear_stream(random, 700, p, q, 3);
  for (std::size_t t = 0; t < 700; ++t) stream[t * (p + q) + p + 3] = t == 0 || t >= 500 ? 0.0 : random.integer(1, 5);
  return stream;
}

// Every `stride`-th report of a single pair equal to batch_cca of its window within 1e-6
// (the float64 tolerance).
inline void expect_equal_to_batch(const std::vector<cca::Report>& reports, const std::vector<double>& stream,
                                  std::size_t p, std::size_t q, std::size_t n, double ridge, std::size_t stride = 1) {
  for (std::size_t i = 0; i < reports.size(); i += stride) {
    const cca::Report& r = reports[i];
    ASSERT_EQ(r.pairs.size(), 1u);
    const std::vector<double> expected = batch_cca(stream, p + q, r.t - n, n, p, q, ridge, r.pairs[0].rho.size());
    for (std::size_t j = 0; j < expected.size(); ++j)
      ASSERT_NEAR(r.pairs[0].rho[j], expected[j], 1e-6) << "t " << r.t << " rho_" << j + 1;
  }
}

// Runs a tracker over stream_turning_singular's 700 tuples with a window of 80 and
// checks that it reports every step before tuple 580 and refuses that one; the reports.
inline std::vector<cca::Report> expect_refused_at_580(const cca::Layout& layout, cca::Options options,
                                                      const std::vector<double>& stream) {
  options.window = 80;
  cca::Tracker tracker(layout, options);
  std::vector<cca::Report> reports;
  const std::string message = input_error_of(
      [&] { tracker.push(stream.data(), 700, [&](const cca::Report& r) { reports.push_back(r); }); });
  EXPECT_NE(message.find("tuple 580"), std::string::npos) << message;
  EXPECT_NE(message.find("singular covariance of Y"), std::string::npos) << message;
  EXPECT_EQ(reports.size(), 580u - 80);
  if (!reports.empty()) {
    EXPECT_EQ(reports.back().t, 579u);
  }
  return reports;
}

inline std::vector<cca::Report> track(const cca::Layout& layout, const cca::Options& options,
                                      const std::vector<double>& stream, std::size_t chunk = 97) {
  cca::Tracker tracker(layout, options);
  std::vector<cca::Report> reports;
  const std::size_t d = layout.total(), count = stream.size() / d;
  for (std::size_t at = 0; at < count; at += chunk)
    tracker.push(stream.data() + at * d, std::min(chunk, count - at),
                 [&](const cca::Report& r) { reports.push_back(r); });
  return reports;
}

}  // namespace simkit::test
