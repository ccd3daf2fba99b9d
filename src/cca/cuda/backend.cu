// The GPU path of the CCA tracker, all float64 on the device:
//   moments   the arriving and leaving rows of a step (or of a batch of steps) copied
//             once, then cuBLAS's symmetric rank-k update (+1 and -1) of M2 and a
//             matrix-vector product for the sums
//   steps     many report steps of a pair solved together (cuda/steps.cu)
//   solve     a gather kernel builds S11 + rI, S22 + rI and S12 from the covariance
//             (any column subsets: the approx mode's samples too); cuSOLVER's Cholesky
//             of both; two cuBLAS triangular solves give K = L1^-1 S12 L2^-T; the smaller
//             Gram matrix of K (a rank-k update) goes to cuSOLVER's symmetric eigen
//             solver; canonical vectors by two more triangular solves
// The host moves the rows and the k answers (and checks the Cholesky pivots).
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cca/backend.hpp"
#include "cca/cuda/steps.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/solver_check.hpp"
#include "core/cuda/solver_handle.hpp"
#include "simkit/error.hpp"

namespace simkit::cca::detail {

namespace {

// S (full, column-major) from the lower triangle of M2 and the sums.
__global__ void covariance_kernel(const double* m2, const double* sums, std::size_t d, double n, double* s) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t j = blockIdx.y;
  if (i >= d) return;
  const std::size_t lo = i >= j ? i + j * d : j + i * d;
  s[i + j * d] = (m2[lo] - sums[i] * sums[j] / n) / (n - 1);
}

// out (rows x cols, column-major) = S(row_idx, col_idx), plus `ridge` on the diagonal when
// `square`; the diagonal also written to diag.
__global__ void gather_kernel(const double* s, std::size_t d, const std::uint32_t* row_idx, std::size_t rows,
                              const std::uint32_t* col_idx, std::size_t cols, double ridge, bool square,
                              double* out, double* diag) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t j = blockIdx.y;
  if (i >= rows) return;
  double v = s[row_idx[i] + std::size_t{col_idx[j]} * d];
  if (square && i == j) {
    v += ridge;
    diag[i] = v;
  }
  out[i + j * rows] = v;
}

__global__ void fill_kernel(double* x, std::size_t n, double value) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) x[i] = value;
}

unsigned blocks_for(std::size_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

class GpuBackend final : public Backend {
 public:
  GpuBackend(std::size_t dims, int device) : device_(make_current(device)), d_(dims) {
    // The kernels put a column per grid row.
    if (dims > 65535) throw UsageError("the GPU path takes tuples of at most 65,535 columns");
    SIMKIT_CUBLAS_CHECK(cublasSetStream(blas_, stream_.get()));
    SIMKIT_CUSOLVER_CHECK(cusolverDnSetStream(solver_, stream_.get()));
    m2_ = cuda::DeviceBuffer<double>(d_ * d_);
    s_ = cuda::DeviceBuffer<double>(d_ * d_);
    sums_ = cuda::DeviceBuffer<double>(d_);
    info_ = cuda::DeviceBuffer<int>(2);
    clear();
    steps_ = std::make_unique<StepSolver>(stream_.get(), blas_);
  }
  ~GpuBackend() override {
    const cuda::QuietDeviceGuard guard(device_);
    if (jacobi_ != nullptr) cusolverDnDestroySyevjInfo(jacobi_);
    if (params_ != nullptr) cusolverDnDestroyParams(params_);
  }

  void bind() override { make_current(device_); }

  void update(const double* added, std::size_t n_added, const double* removed, std::size_t n_removed) override {
    rank_update(added, n_added, 1.0);
    rank_update(removed, n_removed, -1.0);
  }

  void reset(const double* rows, std::size_t count) override {
    clear();
    rank_update(rows, count, 1.0);
  }

  void covariance(std::size_t rows) override {
    covariance_kernel<<<dim3(blocks_for(d_, 256), static_cast<unsigned>(d_)), 256, 0, stream_.get()>>>(
        m2_.get(), sums_.get(), d_, static_cast<double>(rows), s_.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

  std::vector<double> diagonal() override {
    std::vector<double> out(d_);
    SIMKIT_CUDA_CHECK(cudaMemcpy2DAsync(out.data(), sizeof(double), s_.get(), (d_ + 1) * sizeof(double), sizeof(double),
                                        d_, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.sync();
    return out;
  }

  double frobenius() override {
    double norm = 0;
    SIMKIT_CUBLAS_CHECK(cublasDnrm2(blas_, static_cast<int>(d_ * d_), s_.get(), 1, &norm));
    return norm;
  }

  PairResult solve(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, std::size_t k, double ridge,
                   bool vectors) override {
    const std::size_t p = a.size(), q = b.size();
    const bool a_small = p <= q;
    const std::size_t m = a_small ? p : q;
    // Indices, then the three blocks.
    index_host_.resize(p + q);
    for (std::size_t i = 0; i < p; ++i) index_host_[i] = static_cast<std::uint32_t>(a[i]);
    for (std::size_t i = 0; i < q; ++i) index_host_[p + i] = static_cast<std::uint32_t>(b[i]);
    grow(index_, p + q);
    grow(s11_, p * p);
    grow(s22_, q * q);
    grow(k_, p * q);
    grow(gram_, m * m);
    grow(eigen_, m);
    grow(diag_, 2 * (p + q));
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(index_.get(), index_host_.data(), (p + q) * sizeof(std::uint32_t),
                                      cudaMemcpyHostToDevice, stream_.get()));
    const std::uint32_t* ia = index_.get();
    const std::uint32_t* ib = index_.get() + p;
    double* diag = diag_.get();
    gather_kernel<<<dim3(blocks_for(p, 128), static_cast<unsigned>(p)), 128, 0, stream_.get()>>>(
        s_.get(), d_, ia, p, ia, p, ridge, true, s11_.get(), diag);
    gather_kernel<<<dim3(blocks_for(q, 128), static_cast<unsigned>(q)), 128, 0, stream_.get()>>>(
        s_.get(), d_, ib, q, ib, q, ridge, true, s22_.get(), diag + p);
    gather_kernel<<<dim3(blocks_for(p, 128), static_cast<unsigned>(q)), 128, 0, stream_.get()>>>(
        s_.get(), d_, ia, p, ib, q, 0.0, false, k_.get(), nullptr);
    SIMKIT_CUDA_CHECK_LAUNCH();

    potrf(s11_.get(), p, info_.get());
    potrf(s22_.get(), q, info_.get() + 1);
    // The factors' diagonals beside the matrices' for the pivot check.
    SIMKIT_CUBLAS_CHECK(cublasDcopy(blas_, static_cast<int>(p), s11_.get(), static_cast<int>(p + 1), diag + p + q, 1));
    SIMKIT_CUBLAS_CHECK(cublasDcopy(blas_, static_cast<int>(q), s22_.get(), static_cast<int>(q + 1), diag + 2 * p + q, 1));
    std::vector<double> diags(2 * (p + q));
    int info[2] = {0, 0};
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(diags.data(), diag, diags.size() * sizeof(double), cudaMemcpyDeviceToHost,
                                      stream_.get()));
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(info, info_.get(), sizeof info, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.sync();
    check_pivots(info[0], diags.data(), diags.data() + p + q, p, true);
    check_pivots(info[1], diags.data() + p, diags.data() + 2 * p + q, q, false);

    const double one = 1.0, zero = 0.0;
    const int ip = static_cast<int>(p), iq = static_cast<int>(q);
    SIMKIT_CUBLAS_CHECK(cublasDtrsm(blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                                    ip, iq, &one, s11_.get(), ip, k_.get(), ip));
    SIMKIT_CUBLAS_CHECK(cublasDtrsm(blas_, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                                    ip, iq, &one, s22_.get(), iq, k_.get(), ip));
    // The eigen solver's back-transformation reads the triangle the rank-k update leaves.
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(gram_.get(), 0, m * m * sizeof(double), stream_.get()));
    if (a_small) {
      SIMKIT_CUBLAS_CHECK(cublasDsyrk(blas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, ip, iq, &one, k_.get(), ip, &zero,
                                      gram_.get(), ip));
    } else {
      SIMKIT_CUBLAS_CHECK(cublasDsyrk(blas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, iq, ip, &one, k_.get(), ip, &zero,
                                      gram_.get(), iq));
    }
    eigen(vectors, m);
    std::vector<double> values(m);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(values.data(), eigen_.get(), m * sizeof(double), cudaMemcpyDeviceToHost,
                                      stream_.get()));
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(info, info_.get(), sizeof(int), cudaMemcpyDeviceToHost, stream_.get()));
    stream_.sync();
    if (info[0] != 0) throw Failure("cuSOLVER's eigen solver did not converge (info " + std::to_string(info[0]) + ")");

    PairResult out;
    out.a_kept = p;
    out.b_kept = q;
    for (std::size_t j = 0; j < k; ++j) out.rho.push_back(std::sqrt(std::clamp(values[m - 1 - j], 0.0, 1.0)));
    if (vectors) canonical_vectors(out, p, q, k, a_small);
    return out;
  }

  std::size_t batch_capacity(std::size_t pair_dims, std::size_t small_dims, std::size_t /*rows_per_step*/) override {
    if (small_dims > StepSolver::kMaxSmall) return 0;
    std::size_t free_bytes = 0, total_bytes = 0;
    SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Half of what is free, so cuBLAS and the rows have room.
    return free_bytes / 2 / StepSolver::bytes_per_step(pair_dims, small_dims);
  }

  void begin_steps(const double* added, const std::vector<std::size_t>& added_end, const double* removed,
                   const std::vector<std::size_t>& removed_end, std::size_t window_rows) override {
    steps_->begin(added, added_end, removed, removed_end, window_rows, d_, sums_.get());
  }

  void solve_steps(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, std::size_t k,
                   double ridge) override {
    steps_->solve(m2_.get(), a, b, k, ridge);
  }

  std::vector<double> collect_steps(std::vector<int>& singular) override { return steps_->collect(singular); }

  void end_steps() override { steps_->end(m2_.get(), sums_.get()); }

  void read_moments(std::vector<double>& m2, std::vector<double>& sums) override {
    std::vector<double> lower(d_ * d_);
    sums.resize(d_);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(lower.data(), m2_.get(), lower.size() * sizeof(double), cudaMemcpyDeviceToHost,
                                      stream_.get()));
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(sums.data(), sums_.get(), d_ * sizeof(double), cudaMemcpyDeviceToHost,
                                      stream_.get()));
    stream_.sync();
    m2.resize(d_ * d_);
    for (std::size_t i = 0; i < d_; ++i)
      for (std::size_t j = 0; j < d_; ++j) m2[i * d_ + j] = i >= j ? lower[i + j * d_] : lower[j + i * d_];
  }

 private:
  static int make_current(int device) {
    SIMKIT_CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  template <typename T>
  static void grow(cuda::DeviceBuffer<T>& buffer, std::size_t count) {
    if (buffer.size() < count) buffer = cuda::DeviceBuffer<T>(std::max<std::size_t>(count, 1));
  }

  void clear() {
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(m2_.get(), 0, d_ * d_ * sizeof(double), stream_.get()));
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(sums_.get(), 0, d_ * sizeof(double), stream_.get()));
  }

  void rank_update(const double* rows, std::size_t count, double sign) {
    // Rows go up in pieces of at most kChunk, through pinned memory.
    constexpr std::size_t kChunk = 1024;
    if (count == 0) return;
    if (upload_.size() < kChunk * d_) {
      upload_ = cuda::PinnedBuffer<double>(kChunk * d_);
      rows_ = cuda::DeviceBuffer<double>(kChunk * d_);
      ones_ = cuda::DeviceBuffer<double>(kChunk);
      fill_kernel<<<blocks_for(kChunk, 256), 256, 0, stream_.get()>>>(ones_.get(), kChunk, 1.0);
      SIMKIT_CUDA_CHECK_LAUNCH();
    }
    const double one = 1.0;
    for (std::size_t first = 0; first < count; first += kChunk) {
      const std::size_t n = std::min(kChunk, count - first);
      stream_.sync();  // the previous piece has left the pinned buffer
      std::copy(rows + first * d_, rows + (first + n) * d_, upload_.get());
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(rows_.get(), upload_.get(), n * d_ * sizeof(double), cudaMemcpyHostToDevice,
                                        stream_.get()));
      // Row-major n x d rows are a column-major d x n matrix R: M2 += sign R R^T.
      SIMKIT_CUBLAS_CHECK(cublasDsyrk(blas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, static_cast<int>(d_),
                                      static_cast<int>(n), &sign, rows_.get(), static_cast<int>(d_), &one, m2_.get(),
                                      static_cast<int>(d_)));
      SIMKIT_CUBLAS_CHECK(cublasDgemv(blas_, CUBLAS_OP_N, static_cast<int>(d_), static_cast<int>(n), &sign,
                                      rows_.get(), static_cast<int>(d_), ones_.get(), 1, &one, sums_.get(), 1));
    }
  }

  // Eigenvalues (ascending, into eigen_) and with `vectors` eigenvectors (into gram_) of
  // the m x m Gram matrix, by the solver SIMKIT_CCA_EIGEN names (for the benchmark's
  // comparison): syevd (divide and conquer, the default), syevj (Jacobi) or batched
  // (cusolverDnXsyevBatched with a batch of one).
  void eigen(bool vectors, std::size_t m) {
    static const std::string which = [] {
      const char* env = std::getenv("SIMKIT_CCA_EIGEN");
      return std::string(env != nullptr ? env : "syevd");
    }();
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const int im = static_cast<int>(m);
    int lwork = 0;
    if (which == "syevj") {
      if (jacobi_ == nullptr) SIMKIT_CUSOLVER_CHECK(cusolverDnCreateSyevjInfo(&jacobi_));
      SIMKIT_CUSOLVER_CHECK(cusolverDnDsyevj_bufferSize(solver_, jobz, CUBLAS_FILL_MODE_LOWER, im, gram_.get(), im,
                                                        eigen_.get(), &lwork, jacobi_));
      grow(work_, static_cast<std::size_t>(lwork));
      SIMKIT_CUSOLVER_CHECK(cusolverDnDsyevj(solver_, jobz, CUBLAS_FILL_MODE_LOWER, im, gram_.get(), im, eigen_.get(),
                                             work_.get(), lwork, info_.get(), jacobi_));
    } else if (which == "batched") {
      if (params_ == nullptr) SIMKIT_CUSOLVER_CHECK(cusolverDnCreateParams(&params_));
      std::size_t device_bytes = 0, host_bytes = 0;
      SIMKIT_CUSOLVER_CHECK(cusolverDnXsyevBatched_bufferSize(solver_, params_, jobz, CUBLAS_FILL_MODE_LOWER, im,
                                                              CUDA_R_64F, gram_.get(), im, CUDA_R_64F, eigen_.get(),
                                                              CUDA_R_64F, &device_bytes, &host_bytes, 1));
      grow(work_, device_bytes / sizeof(double) + 1);
      host_work_.resize(host_bytes + 1);
      SIMKIT_CUSOLVER_CHECK(cusolverDnXsyevBatched(solver_, params_, jobz, CUBLAS_FILL_MODE_LOWER, im, CUDA_R_64F,
                                                   gram_.get(), im, CUDA_R_64F, eigen_.get(), CUDA_R_64F, work_.get(),
                                                   device_bytes, host_work_.data(), host_bytes, info_.get(), 1));
    } else {
      SIMKIT_CUSOLVER_CHECK(cusolverDnDsyevd_bufferSize(solver_, jobz, CUBLAS_FILL_MODE_LOWER, im, gram_.get(), im,
                                                        eigen_.get(), &lwork));
      grow(work_, static_cast<std::size_t>(lwork));
      SIMKIT_CUSOLVER_CHECK(cusolverDnDsyevd(solver_, jobz, CUBLAS_FILL_MODE_LOWER, im, gram_.get(), im, eigen_.get(),
                                             work_.get(), lwork, info_.get()));
    }
  }

  void potrf(double* a, std::size_t n, int* info) {
    int lwork = 0;
    SIMKIT_CUSOLVER_CHECK(
        cusolverDnDpotrf_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), a, static_cast<int>(n), &lwork));
    grow(potrf_work_, static_cast<std::size_t>(lwork));
    SIMKIT_CUSOLVER_CHECK(cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), a, static_cast<int>(n),
                                          potrf_work_.get(), lwork, info));
  }

  static void check_pivots(int info, const double* matrix_diag, const double* factor_diag, std::size_t n, bool first) {
    if (info != 0) throw Singular{first};
    const double top = *std::max_element(matrix_diag, matrix_diag + n);
    for (std::size_t i = 0; i < n; ++i)
      if (!(factor_diag[i] * factor_diag[i] > kSingularPivot * top)) throw Singular{first};
  }

  // The k leading eigenvectors E (the last k columns of the Gram matrix, smallest first)
  // become the small side's vectors L^-T E and the other side's L'^-T K^T E / rho.
  void canonical_vectors(PairResult& out, std::size_t p, std::size_t q, std::size_t k, bool a_small) {
    const std::size_t m = a_small ? p : q, other = a_small ? q : p;
    const double one = 1.0, zero = 0.0;
    grow(vec_small_, m * k);
    grow(vec_other_, other * k);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(vec_small_.get(), gram_.get() + (m - k) * m, m * k * sizeof(double),
                                      cudaMemcpyDeviceToDevice, stream_.get()));
    // other side: K^T E (a small) or K E (b small)
    SIMKIT_CUBLAS_CHECK(cublasDgemm(blas_, a_small ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(other),
                                    static_cast<int>(k), static_cast<int>(m), &one, k_.get(), static_cast<int>(p),
                                    vec_small_.get(), static_cast<int>(m), &zero, vec_other_.get(),
                                    static_cast<int>(other)));
    const double* l_small = a_small ? s11_.get() : s22_.get();
    const double* l_other = a_small ? s22_.get() : s11_.get();
    SIMKIT_CUBLAS_CHECK(cublasDtrsm(blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                                    static_cast<int>(m), static_cast<int>(k), &one, l_small, static_cast<int>(m),
                                    vec_small_.get(), static_cast<int>(m)));
    SIMKIT_CUBLAS_CHECK(cublasDtrsm(blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                                    static_cast<int>(other), static_cast<int>(k), &one, l_other,
                                    static_cast<int>(other), vec_other_.get(), static_cast<int>(other)));
    std::vector<double> small(m * k), big(other * k);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(small.data(), vec_small_.get(), small.size() * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream_.get()));
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(big.data(), vec_other_.get(), big.size() * sizeof(double), cudaMemcpyDeviceToHost,
                                      stream_.get()));
    stream_.sync();
    out.a_vectors.assign(k * p, 0.0);
    out.b_vectors.assign(k * q, 0.0);
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t col = k - 1 - j;  // largest last
      const double rho = out.rho[j];
      double* va = out.a_vectors.data() + j * p;
      double* vb = out.b_vectors.data() + j * q;
      double* vs = a_small ? va : vb;
      double* vo = a_small ? vb : va;
      for (std::size_t i = 0; i < m; ++i) vs[i] = small[col * m + i];
      for (std::size_t i = 0; i < other; ++i) vo[i] = rho > 0 ? big[col * other + i] / rho : 0.0;
    }
  }

  int device_;  // first: current before the stream and buffers below are made on it
  std::size_t d_;
  cuda::Stream stream_;
  cuda::CublasHandle blas_handle_ = cuda::make_cublas();
  cublasHandle_t blas_ = blas_handle_.get();
  cuda::SolverHandle solver_handle_ = cuda::make_solver();
  cusolverDnHandle_t solver_ = solver_handle_.get();
  syevjInfo_t jacobi_ = nullptr;
  cusolverDnParams_t params_ = nullptr;
  std::vector<char> host_work_;
  cuda::DeviceBuffer<double> m2_, s_, sums_, rows_, ones_;
  cuda::PinnedBuffer<double> upload_;
  cuda::DeviceBuffer<double> s11_, s22_, k_, gram_, eigen_, diag_, work_, potrf_work_, vec_small_, vec_other_;
  cuda::DeviceBuffer<std::uint32_t> index_;
  cuda::DeviceBuffer<int> info_;
  std::vector<std::uint32_t> index_host_;
  std::unique_ptr<StepSolver> steps_;
};

}  // namespace

std::unique_ptr<Backend> gpu_backend(std::size_t dims, int device) { return std::make_unique<GpuBackend>(dims, device); }

}  // namespace simkit::cca::detail
