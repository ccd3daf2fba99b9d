// Shared by the embed tests (CPU and GPU): small sparse matrices with a dense copy, and a
// PPMI model of the bundled Brown sentences.
#pragma once

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <vector>

#include "simkit/disco.hpp"
#include "simkit/embed.hpp"
#include "test_support.hpp"

namespace simkit::test {

// A CSR matrix built from a dense one (its nonzero entries).
struct SparseMatrix {
  std::size_t rows = 0, cols = 0;
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint32_t> columns;
  std::vector<float> values;

  static SparseMatrix from_dense(const Eigen::MatrixXd& d) {
    SparseMatrix m;
    m.rows = static_cast<std::size_t>(d.rows());
    m.cols = static_cast<std::size_t>(d.cols());
    for (Eigen::Index r = 0; r < d.rows(); ++r) {
      for (Eigen::Index c = 0; c < d.cols(); ++c)
        if (d(r, c) != 0) {
          m.columns.push_back(static_cast<std::uint32_t>(c));
          m.values.push_back(static_cast<float>(d(r, c)));
        }
      m.offsets.push_back(m.columns.size());
    }
    return m;
  }
  // Entries uniform in (0, 1) with probability `density`, else 0 (PPMI-like: positive).
  static SparseMatrix random(std::size_t rows, std::size_t cols, double density, Random& random) {
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
    for (Eigen::Index r = 0; r < d.rows(); ++r)
      for (Eigen::Index c = 0; c < d.cols(); ++c)
        if (random.uniform(0, 1) < density) d(r, c) = random.uniform(0.01f, 1);
    return from_dense(d);
  }
  // sum_i decay^i x_i y_i^T over `terms` random sparse vectors x_i, y_i (density 0.3).
  static SparseMatrix decaying(std::size_t rows, std::size_t cols, int terms, double decay, Random& random) {
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
    for (int i = 0; i < terms; ++i) {
      Eigen::VectorXd x = Eigen::VectorXd::Zero(d.rows()), y = Eigen::VectorXd::Zero(d.cols());
      for (Eigen::Index r = 0; r < x.size(); ++r)
        if (random.uniform(0, 1) < 0.3) x(r) = random.uniform(-1, 1);
      for (Eigen::Index c = 0; c < y.size(); ++c)
        if (random.uniform(0, 1) < 0.3) y(c) = random.uniform(-1, 1);
      d += std::pow(decay, i) * x.normalized() * y.normalized().transpose();
    }
    return from_dense(d);
  }
  Eigen::MatrixXd dense() const {
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
    for (std::size_t r = 0; r < rows; ++r)
      for (std::uint64_t e = offsets[r]; e < offsets[r + 1]; ++e)
        d(static_cast<Eigen::Index>(r), columns[e]) = values[e];
    return d;
  }
  embed::CsrView view() const { return {rows, cols, offsets.data(), columns.data(), values.data()}; }
};

// A PPMI model (embed's counting defaults) of data/samples/postings/brown-sample.txt:
// rows for its `words` most frequent words, every word a context.
inline disco::Model sample_ppmi_model(std::size_t words = 3000) {
  disco::BuildOptions options = embed::default_options().counting;
  options.words = words;
  return disco::build({(source_dir() / "data/samples/postings/brown-sample.txt").string()}, options);
}

}  // namespace simkit::test
