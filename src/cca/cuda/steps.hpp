// Internal: the GPU's batched CCA solver. Many report steps of one stream pair are
// solved together, each from its own window's covariance:
//   J = [[S_bb + rI, S_bs], [S_sb, S_ss + rI]]   (b: the larger stream, s: the smaller)
// Factoring J's first |b| columns (Cholesky) leaves the Schur complement
// S = S_ss + rI - S_sb (S_bb + rI)^-1 S_bs in its trailing block; with L L^T = S_ss + rI,
// M = L^-1 S L^-T = I - K K^T, so the k smallest eigenvalues of M are 1 - rho_j^2.
// Everything is float64 and batched over the steps: covariance blocks built from the
// moments and the steps' rows, a blocked Cholesky (a panel kernel and cuBLAS's batched
// products), L^-1 assembled from its diagonal blocks' inverses and applied by products,
// Householder tridiagonalisation (a block a matrix, lower triangles) and bisection for
// the k smallest eigenvalues.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/cuda/memory.hpp"

namespace simkit::cca::detail {

class StepSolver {
 public:
  // Pairs whose smaller side is wider than this are solved one step at a time (the
  // tridiagonalisation keeps twelve vectors of that size in shared memory).
  static constexpr std::size_t kMaxSmall = 2048;

  StepSolver(cudaStream_t stream, cublasHandle_t blas) : stream_(stream), blas_(blas) {}
  // Waits for the stream: a solve never collected may still be copying into its answers.
  ~StepSolver();
  StepSolver(const StepSolver&) = delete;
  StepSolver& operator=(const StepSolver&) = delete;

  // Device bytes one step of a pair needs.
  static std::size_t bytes_per_step(std::size_t pair_dims, std::size_t small_dims);

  // Uploads the steps' rows (through pinned memory: `added` and `removed` may change once
  // this returns) and makes each step's column sums from `sums` (the moments' sums before
  // the first step; d of them, on the device).
  void begin(const double* added, const std::vector<std::size_t>& added_end, const double* removed,
             const std::vector<std::size_t>& removed_end, std::size_t window_rows, std::size_t d,
             const double* sums);

  // Starts the solve of the begun steps for columns a against b, from M2 (d x d, lower
  // triangle, column-major, on the device); returns without waiting for the device.
  void solve(const double* m2, const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, std::size_t k,
             double ridge);

  // The oldest started solve's correlations (steps x k, row-major), waiting for them;
  // singular as Backend::collect_steps says.
  std::vector<double> collect(std::vector<int>& singular);

  // Moves the moments (M2's lower triangle, the sums) past the last step, from the rows
  // already on the device.
  void end(double* m2, double* sums);

 private:
  // Cholesky of the first `columns` columns of each n x n matrix (lower triangle), the
  // trailing block left as its Schur complement (lower triangle); with `store` the factor
  // replaces the matrix's first columns.
  void cholesky(double* mats, std::size_t stride, int ld, int n, int columns, bool store, int flag);
  // M = L^-1 S L^-T over each S (m x m, symmetric), L the factor cholesky() stored in
  // small_ (the inverses of its diagonal blocks still in inverse_).
  void whiten(double* schur, std::size_t schur_stride, int ld, int m);

  // A started solve's answers on their way to the host (pinned, so that they copy while
  // the host works), and the column order its build read.
  struct Answers {
    cuda::PinnedBuffer<double> lambda;
    cuda::PinnedBuffer<int> flags, order;
    std::size_t steps = 0, k = 0;
    int a_flag = 0, b_flag = 0;
    std::unique_ptr<cuda::Event> copied;
  };
  // A batch's rows and step ends on their way to the device; two, so that one fills while
  // the other's copy waits its turn on the stream.
  struct Staging {
    cuda::PinnedBuffer<double> rows;
    cuda::PinnedBuffer<int> ends;
    cuda::Event copied;
  };

  cudaStream_t stream_;
  cublasHandle_t blas_;
  std::size_t steps_ = 0, d_ = 0, window_ = 0, removed_base_ = 0, removed_rows_ = 0;
  cuda::DeviceBuffer<double> rows_, step_sums_, joint_, small_, tops_, diag_, off_, lambda_, inverse_, panel_,
      whitener_, product_;
  cuda::DeviceBuffer<int> ends_, order_, flags_;
  Staging staging_[2];
  int next_staging_ = 0;
  std::deque<Answers> started_;  // oldest first
  std::vector<Answers> spare_;   // collected, their buffers kept for the next
};

}  // namespace simkit::cca::detail
