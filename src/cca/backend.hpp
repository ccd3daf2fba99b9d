// Internal: what the CPU and GPU paths of the CCA tracker do. The tracker (tracker.cpp)
// owns the window and the schedule; a backend holds the moments (sums of the shifted
// tuples and of their outer products, float64), turns them into the joint covariance
// and solves stream pairs on it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "simkit/cca.hpp"

namespace simkit::cca::detail {

// Thrown by solve() when S11 + rI (first) or S22 + rI (!first) is not positive definite.
struct Singular {
  bool first = true;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Makes the backend's device current on the calling thread (a tracker may be driven
  // from another thread than the one that made it: a thread a GPU).
  virtual void bind() {}
  // M2 += sum of a a^T over the `added` rows - sum over the `removed` rows; the sums
  // likewise. Rows are row-major, layout.total() wide, already shifted.
  virtual void update(const double* added, std::size_t n_added, const double* removed, std::size_t n_removed) = 0;
  // The moments of exactly these rows.
  virtual void reset(const double* rows, std::size_t count) = 0;
  // Makes S = (M2 - s s^T / rows) / (rows - 1) current.
  virtual void covariance(std::size_t rows) = 0;
  // S's diagonal, and its Frobenius norm.
  virtual std::vector<double> diagonal() = 0;
  virtual double frobenius() = 0;
  // The CCA of the columns `a` against the columns `b` of S (indices into the tuple):
  // the k largest correlations (and with `vectors` the canonical vectors, a_vectors k x
  // |a|, b_vectors k x |b|, signs as the backend finds them). Throws Singular.
  virtual PairResult solve(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, std::size_t k,
                           double ridge, bool vectors) = 0;
  // The raw moments, for tests: M2 (d x d, full) and the sums.
  virtual void read_moments(std::vector<double>& m2, std::vector<double>& sums) = 0;

  // Many report steps solved together (exact correlations only). batch_capacity: how
  // many steps of a pair of `pair_dims` columns (the smaller side `small_dims`), with
  // `rows_per_step` rows entering and leaving between steps, one batch may hold; 0 where
  // the backend cannot or it does not pay.
  virtual std::size_t batch_capacity(std::size_t /*pair_dims*/, std::size_t /*small_dims*/,
                                     std::size_t /*rows_per_step*/) {
    return 0;
  }
  // The steps' rows: before step j, added rows [added_end[j-1], added_end[j]) enter and
  // removed rows [removed_end[j-1], removed_end[j]) leave (shifted, row-major, the moments
  // being those before the first step); every step's window holds window_rows tuples. The
  // moments do not move until end_steps(); the rows may change once end_steps() returns.
  virtual void begin_steps(const double* /*added*/, const std::vector<std::size_t>& /*added_end*/,
                           const double* /*removed*/, const std::vector<std::size_t>& /*removed_end*/,
                           std::size_t /*window_rows*/) {}
  // Moves the moments past the last begun step (what update() with all its rows does).
  virtual void end_steps() {}
  // Starts solving each begun step for the k largest correlations of columns `a` against
  // `b`; the answers come from collect_steps(). A GPU returns at once, so that the host
  // gathers the next batch's rows while the device solves this one.
  virtual void solve_steps(const std::vector<std::size_t>& /*a*/, const std::vector<std::size_t>& /*b*/,
                           std::size_t /*k*/, double /*ridge*/) {}
  // The answers of the oldest solve_steps() not yet collected (waiting for them): steps x
  // k correlations, row-major. singular[j] is 1 when S11 + rI of step j is not positive
  // definite, 2 when S22 + rI is not (1 wins), else 0; that step's correlations are then
  // meaningless.
  virtual std::vector<double> collect_steps(std::vector<int>& /*singular*/) { return {}; }
};

std::unique_ptr<Backend> cpu_backend(std::size_t dims);
std::unique_ptr<Backend> gpu_backend(std::size_t dims, int device);

// A pivot of a Cholesky factor this small against the matrix's largest diagonal entry
// means the matrix is singular for our purposes (rounding made it barely positive).
inline constexpr double kSingularPivot = 1e-13;

// Signs made canonical (each a-vector's largest-magnitude entry positive, the first such
// on ties; its b-vector flipped with it), so both paths print the same vectors.
void canonical_signs(PairResult& result, std::size_t a_dims, std::size_t b_dims);

}  // namespace simkit::cca::detail
