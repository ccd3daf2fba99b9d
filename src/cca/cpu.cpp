// The CPU path of the CCA tracker: moments by OpenBLAS's symmetric rank-k update, the
// pair solves by Eigen (Cholesky factors, two triangular solves, a symmetric eigen
// solver on the smaller Gram matrix of K). Batches of report steps are solved on all
// cores, each worker walking its run of steps with its own copy of the pair's moments.
#include <cblas.h>
#include <oneapi/tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>

#include "cca/backend.hpp"
#include "simkit/threads.hpp"

namespace simkit::cca::detail {

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMatrix = Eigen::MatrixXd;

Eigen::LLT<ColMatrix> factor(const ColMatrix& m, bool first) {
  Eigen::LLT<ColMatrix> llt(m);
  if (llt.info() != Eigen::Success) throw Singular{first};
  const double top = m.diagonal().maxCoeff();
  const ColMatrix& l = llt.matrixLLT();
  for (Eigen::Index i = 0; i < l.rows(); ++i)
    if (!(l(i, i) * l(i, i) > kSingularPivot * top)) throw Singular{first};
  return llt;
}

// The CCA of columns a against b of the covariance s.
PairResult solve_pair(const ColMatrix& s, const std::vector<std::size_t>& a, const std::vector<std::size_t>& b,
                      std::size_t k, double ridge, bool vectors) {
  const std::size_t p = a.size(), q = b.size();
  ColMatrix s11 = s(a, a), s22 = s(b, b), s12 = s(a, b);
  s11.diagonal().array() += ridge;
  s22.diagonal().array() += ridge;
  const Eigen::LLT<ColMatrix> l1 = factor(s11, true);
  const Eigen::LLT<ColMatrix> l2 = factor(s22, false);
  // K = L1^-1 S12 L2^-T
  ColMatrix kmat = s12;
  l1.matrixL().solveInPlace(kmat);
  ColMatrix kt = kmat.transpose();
  l2.matrixL().solveInPlace(kt);
  kmat = kt.transpose();

  const bool a_small = p <= q;
  const ColMatrix gram = a_small ? ColMatrix(kmat * kmat.transpose()) : ColMatrix(kmat.transpose() * kmat);
  Eigen::SelfAdjointEigenSolver<ColMatrix> eigen(gram, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
  const std::size_t m = gram.rows();
  PairResult out;
  out.a_kept = p;
  out.b_kept = q;
  for (std::size_t j = 0; j < k; ++j) out.rho.push_back(std::sqrt(std::clamp(eigen.eigenvalues()[m - 1 - j], 0.0, 1.0)));
  if (!vectors) return out;
  out.a_vectors.assign(k * p, 0.0);
  out.b_vectors.assign(k * q, 0.0);
  for (std::size_t j = 0; j < k; ++j) {
    const Eigen::VectorXd e = eigen.eigenvectors().col(m - 1 - j);
    // The small side's vector is L^-T e; the other side's is L^-T K^T e / rho (or K e).
    Eigen::VectorXd va, vb;
    if (a_small) {
      va = l1.matrixU().solve(e);
      vb = out.rho[j] > 0 ? Eigen::VectorXd(l2.matrixU().solve(kmat.transpose() * e) / out.rho[j])
                          : Eigen::VectorXd::Zero(q);
    } else {
      vb = l2.matrixU().solve(e);
      va = out.rho[j] > 0 ? Eigen::VectorXd(l1.matrixU().solve(kmat * e) / out.rho[j]) : Eigen::VectorXd::Zero(p);
    }
    std::copy(va.data(), va.data() + p, out.a_vectors.begin() + j * p);
    std::copy(vb.data(), vb.data() + q, out.b_vectors.begin() + j * q);
  }
  return out;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(std::size_t dims) : d_(dims), m2_(Matrix::Zero(dims, dims)), sums_(Eigen::VectorXd::Zero(dims)) {}

  void update(const double* added, std::size_t n_added, const double* removed, std::size_t n_removed) override {
    rank_update(added, n_added, 1.0);
    rank_update(removed, n_removed, -1.0);
  }

  void reset(const double* rows, std::size_t count) override {
    m2_.setZero();
    sums_.setZero();
    rank_update(rows, count, 1.0);
  }

  void covariance(std::size_t rows) override {
    const double n = static_cast<double>(rows);
    s_.resize(d_, d_);
    for (std::size_t i = 0; i < d_; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        const double v = (m2_(i, j) - sums_[i] * sums_[j] / n) / (n - 1);
        s_(i, j) = v;
        s_(j, i) = v;
      }
  }

  std::vector<double> diagonal() override {
    std::vector<double> out(d_);
    for (std::size_t i = 0; i < d_; ++i) out[i] = s_(i, i);
    return out;
  }

  double frobenius() override { return s_.norm(); }

  PairResult solve(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, std::size_t k, double ridge,
                   bool vectors) override {
    return solve_pair(s_, a, b, k, ridge, vectors);
  }

  std::size_t batch_capacity(std::size_t /*pair_dims*/, std::size_t /*small_dims*/,
                             std::size_t rows_per_step) override {
    // Each worker moves its own copy of the moments, which pays only while few rows come
    // between steps (measured on 2 cores: reporting every 16th tuple ran slower batched).
    return rows_per_step <= 8 ? 4 * std::max<std::size_t>(1, max_threads()) : 0;
  }

  void begin_steps(const double* added, const std::vector<std::size_t>& added_end, const double* removed,
                   const std::vector<std::size_t>& removed_end, std::size_t window_rows) override {
    added_ = added;
    removed_ = removed;
    added_end_ = added_end;
    removed_end_ = removed_end;
    window_ = window_rows;
  }

  void end_steps() override {
    if (added_end_.empty()) return;
    update(added_, added_end_.back(), removed_, removed_end_.back());
  }

  void solve_steps(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, std::size_t k,
                   double ridge) override {
    std::vector<int> singular;
    std::vector<double> rho = solve_now(a, b, k, ridge, singular);
    answers_.push_back({std::move(rho), std::move(singular)});
  }

  std::vector<double> collect_steps(std::vector<int>& singular) override {
    auto [rho, flags] = std::move(answers_.front());
    answers_.pop_front();
    singular = std::move(flags);
    return std::move(rho);
  }

  void read_moments(std::vector<double>& m2, std::vector<double>& sums) override {
    m2.resize(d_ * d_);
    for (std::size_t i = 0; i < d_; ++i)
      for (std::size_t j = 0; j < d_; ++j) m2[i * d_ + j] = i >= j ? m2_(i, j) : m2_(j, i);
    sums.assign(sums_.data(), sums_.data() + d_);
  }

 private:
  // The begun steps' correlations of columns a against b, solved here and now.
  std::vector<double> solve_now(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, std::size_t k,
                                double ridge, std::vector<int>& singular) {
    const std::size_t steps = added_end_.size(), p = a.size(), q = b.size(), width = p + q;
    std::vector<std::size_t> cols(a);
    cols.insert(cols.end(), b.begin(), b.end());
    std::vector<std::size_t> pa(p), pb(q);  // a and b within the pair's columns
    std::iota(pa.begin(), pa.end(), std::size_t{0});
    std::iota(pb.begin(), pb.end(), p);
    std::vector<double> rho(steps * k, 0.0);
    singular.assign(steps, 0);
    // Runs of steps, a few a core: each starts from the moments before the batch.
    const std::size_t runs = std::min(steps, 2 * std::max<std::size_t>(1, max_threads()));
    tbb::parallel_for(std::size_t{0}, runs, [&](std::size_t run) {
      const std::size_t first = steps * run / runs, last = steps * (run + 1) / runs;
      ColMatrix m2(width, width);
      Eigen::VectorXd sums(width);
      for (std::size_t i = 0; i < width; ++i) {
        sums[i] = sums_[cols[i]];
        for (std::size_t j = 0; j <= i; ++j) m2(i, j) = cols[i] >= cols[j] ? m2_(cols[i], cols[j]) : m2_(cols[j], cols[i]);
      }
      ColMatrix block;
      auto apply = [&](const double* rows, std::size_t from, std::size_t to, double sign) {
        if (to == from) return;
        block.resize(width, to - from);  // the rows' pair columns, a row a column
        for (std::size_t r = from; r < to; ++r)
          for (std::size_t i = 0; i < width; ++i) block(i, r - from) = rows[r * d_ + cols[i]];
        m2.selfadjointView<Eigen::Lower>().rankUpdate(block, sign);
        sums += sign * block.rowwise().sum();
      };
      const std::size_t a0 = first == 0 ? 0 : added_end_[first - 1], r0 = first == 0 ? 0 : removed_end_[first - 1];
      apply(added_, 0, a0, 1.0);
      apply(removed_, 0, r0, -1.0);
      const double n = static_cast<double>(window_);
      ColMatrix cov(width, width);
      for (std::size_t j = first; j < last; ++j) {
        apply(added_, j == 0 ? 0 : added_end_[j - 1], added_end_[j], 1.0);
        apply(removed_, j == 0 ? 0 : removed_end_[j - 1], removed_end_[j], -1.0);
        for (std::size_t c = 0; c < width; ++c)
          for (std::size_t r = c; r < width; ++r) cov(r, c) = cov(c, r) = (m2(r, c) - sums[r] * sums[c] / n) / (n - 1);
        try {
          const PairResult result = solve_pair(cov, pa, pb, k, ridge, false);
          std::copy(result.rho.begin(), result.rho.end(), rho.begin() + static_cast<std::ptrdiff_t>(j * k));
        } catch (const Singular& s) {
          singular[j] = s.first ? 1 : 2;
        }
      }
    });
    return rho;
  }

  void rank_update(const double* rows, std::size_t count, double sign) {
    if (count == 0) return;
    // Row-major M2's lower triangle += sign * R^T R (R: count x d, row-major).
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, static_cast<int>(d_), static_cast<int>(count), sign, rows,
                static_cast<int>(d_), 1.0, m2_.data(), static_cast<int>(d_));
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t c = 0; c < d_; ++c) sums_[c] += sign * rows[r * d_ + c];
  }

  std::size_t d_;
  Matrix m2_;
  Eigen::VectorXd sums_;
  ColMatrix s_;
  // The begun steps (the tracker's buffers, unchanged until end_steps()).
  const double* added_ = nullptr;
  const double* removed_ = nullptr;
  std::vector<std::size_t> added_end_, removed_end_;
  std::size_t window_ = 0;
  // Solved steps' answers (correlations, singular flags) not yet collected, oldest first.
  std::deque<std::pair<std::vector<double>, std::vector<int>>> answers_;
};

}  // namespace

std::unique_ptr<Backend> cpu_backend(std::size_t dims) { return std::make_unique<CpuBackend>(dims); }

void canonical_signs(PairResult& result, std::size_t a_dims, std::size_t b_dims) {
  const std::size_t k = result.rho.size();
  if (result.a_vectors.size() != k * a_dims) return;
  for (std::size_t j = 0; j < k; ++j) {
    double* va = result.a_vectors.data() + j * a_dims;
    double* vb = result.b_vectors.data() + j * b_dims;
    std::size_t at = 0;
    for (std::size_t i = 1; i < a_dims; ++i)
      if (std::fabs(va[i]) > std::fabs(va[at]) * (1 + 1e-9)) at = i;
    if (va[at] < 0) {
      for (std::size_t i = 0; i < a_dims; ++i) va[i] = -va[i];
      for (std::size_t i = 0; i < b_dims; ++i) vb[i] = -vb[i];
    }
  }
}

}  // namespace simkit::cca::detail
