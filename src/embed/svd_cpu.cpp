// The randomized truncated SVD on the CPU. The sketches are row-major (a row per word),
// so that a sparse x dense product adds whole rows of the right side (vectorised axpys)
// and TBB splits it by rows; the orthonormal bases come from Cholesky QR (BLAS 3)
// or, where the sketch is too ill-conditioned for it, LAPACK's Householder QR (OpenBLAS)
// of a column-major copy (LAPACK's LQ of the row-major memory as it is runs its
// reflectors along strided rows, several times slower); B B^T and its eigenvectors are
// float64.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <cblas.h>
#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "embed/svd.hpp"
#include "embed/test_matrix.hpp"
#include "simkit/error.hpp"

extern "C" {
// LAPACK (OpenBLAS ships it; Debian has no LAPACKE header for it).
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
}

namespace simkit::embed::detail {

namespace {

using Sparse = Eigen::SparseMatrix<float, Eigen::RowMajor, std::int64_t>;
using Dense = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Sparse to_eigen(const CsrView& a) {
  Sparse m(static_cast<Eigen::Index>(a.rows), static_cast<Eigen::Index>(a.cols));
  const std::uint64_t nonzeros = a.offsets[a.rows];
  m.resizeNonZeros(static_cast<Eigen::Index>(nonzeros));
  for (std::size_t i = 0; i <= a.rows; ++i) m.outerIndexPtr()[i] = static_cast<std::int64_t>(a.offsets[i]);
  for (std::uint64_t e = 0; e < nonzeros; ++e) {
    m.innerIndexPtr()[e] = a.columns[e];
    m.valuePtr()[e] = a.values[e];
  }
  return m;
}

// y = a x, rows of a in parallel blocks (a word's row costs its entries: small blocks
// keep the threads even). Each entry of a adds a row of x (l floats) to y's row: the
// product is bound by fetching those rows from memory, so the rows of the entries
// kAhead further on are prefetched. Eigen's own sparse x dense product gives the same
// floats (the same sums in the same order) 1.65x slower, for want of the prefetch (one
// core, a 47,000-word PPMI-like matrix: 1.80 s against 1.09 s); slicing x's columns to
// keep them in cache measured 2.5x slower still.
void product(const Sparse& a, const Dense& x, Dense& y) {
  constexpr std::int64_t kAhead = 8;
  const Eigen::Index l = x.cols();
  y.resize(a.rows(), l);
  const std::int64_t* offsets = a.outerIndexPtr();
  const std::int64_t* columns = a.innerIndexPtr();
  const float* values = a.valuePtr();
  tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, a.rows(), 128), [&](const auto& r) {
    for (Eigen::Index i = r.begin(); i != r.end(); ++i) {
      float* out = y.data() + i * l;
      std::fill(out, out + l, 0.0f);
      const std::int64_t end = offsets[i + 1];
      for (std::int64_t e = offsets[i]; e < end; ++e) {
        if (e + kAhead < end) {
          const char* ahead = reinterpret_cast<const char*>(x.data() + columns[e + kAhead] * l);
          for (Eigen::Index byte = 0; byte < l * static_cast<Eigen::Index>(sizeof(float)); byte += 64)
            __builtin_prefetch(ahead + byte);
        }
        const float v = values[e];
        const float* row = x.data() + columns[e] * l;
#pragma omp simd
        for (Eigen::Index k = 0; k < l; ++k) out[k] += v * row[k];
      }
    }
  });
}

void check_lapack(int info, const char* what) {
  if (info != 0) throw Failure(fmt::format("LAPACK {} failed (info {})", what, info));
}

// Householder QR (LAPACK) of a column-major copy: y replaced by an orthonormal basis of
// its columns, whatever their condition.
void householder(Dense& y) {
  Eigen::MatrixXf a = y;  // column-major
  const int n = static_cast<int>(a.rows()), l = static_cast<int>(a.cols());
  std::vector<float> tau(static_cast<std::size_t>(l));
  int info = 0, query = -1;
  float size = 0, size_q = 0;
  sgeqrf_(&n, &l, a.data(), &n, tau.data(), &size, &query, &info);
  check_lapack(info, "sgeqrf (workspace query)");
  sorgqr_(&n, &l, &l, a.data(), &n, tau.data(), &size_q, &query, &info);
  check_lapack(info, "sorgqr (workspace query)");
  const int lwork = static_cast<int>(std::max(size, size_q)) + 1;
  std::vector<float> work(static_cast<std::size_t>(lwork));
  sgeqrf_(&n, &l, a.data(), &n, tau.data(), work.data(), &lwork, &info);
  check_lapack(info, "sgeqrf");
  sorgqr_(&n, &l, &l, a.data(), &n, tau.data(), work.data(), &lwork, &info);
  check_lapack(info, "sorgqr");
  y = a;
}

// One Cholesky QR step: G = Y^T Y, G = R^T R, Y <- Y R^-1 (BLAS 3 on the row-major memory
// as it is). False, y untouched, when G is not numerically positive definite or R's
// diagonal spans more than 1e3 (Y's condition is at least that: too much for float).
bool cholesky_step(Dense& y) {
  const int n = static_cast<int>(y.rows()), l = static_cast<int>(y.cols());
  std::vector<float> g(static_cast<std::size_t>(l) * static_cast<std::size_t>(l), 0.0f);
  cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, l, n, 1.0f, y.data(), l, 0.0f, g.data(), l);
  // Row-major upper = column-major lower: LAPACK's 'L' factor L (G = L L^T), and R = L^T.
  const char lower = 'L';
  int info = 0;
  spotrf_(&lower, &l, g.data(), &l, &info);
  if (info != 0) return false;
  float smallest = g[0], largest = g[0];
  for (int i = 1; i < l; ++i) {
    smallest = std::min(smallest, g[static_cast<std::size_t>(i) * (l + 1)]);
    largest = std::max(largest, g[static_cast<std::size_t>(i) * (l + 1)]);
  }
  if (!(smallest > 1e-3f * largest)) return false;
  cblas_strsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, n, l, 1.0f, g.data(), l, y.data(), l);
  return true;
}

// Replaces y (n x l, row-major, n >= l) by a basis of its columns: Cholesky QR twice
// (CholeskyQR2, Fukaya et al. 2014: all BLAS 3, 3x faster here than Householder,
// orthonormal to float rounding when Y's condition is below about 1e3, as a sketch of a
// PPMI matrix's range is), else Householder QR (of y itself, or of the first step's
// result: the same columns' span). `passes` 1 is enough between power iterations, which
// need only the span and well-scaled columns (orthogonal to about 1e-7 cond(Y)^2).
void orthonormalize(Dense& y, int passes = 2) {
  for (int p = 0; p < passes; ++p)
    if (!cholesky_step(y)) return householder(y);
}

// a (m x k) . b (k x n), row-major, on OpenBLAS's threads.
Dense multiply(const Dense& a, const Dense& b) {
  Dense c(a.rows(), b.cols());
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(a.rows()), static_cast<int>(b.cols()),
              static_cast<int>(a.cols()), 1.0f, a.data(), static_cast<int>(a.cols()), b.data(),
              static_cast<int>(b.cols()), 0.0f, c.data(), static_cast<int>(c.cols()));
  return c;
}

// The process's CPU time (all threads), seconds.
double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// SIMKIT_EMBED_STATS=1: each step's wall and CPU time on standard error (for tuning on a
// shared machine, where the CPU time says more than the wall).
struct StepClock {
  bool on = std::getenv("SIMKIT_EMBED_STATS") != nullptr;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  double last_cpu = cpu_seconds();
  void operator()(const char* step) {
    const auto now = std::chrono::steady_clock::now();
    const double cpu = cpu_seconds();
    if (on)
      std::fprintf(stderr, "embed: %-12s %8.1f ms wall %8.1f ms CPU\n", step,
                   std::chrono::duration<double, std::milli>(now - last).count(), 1e3 * (cpu - last_cpu));
    last = now;
    last_cpu = cpu;
  }
};

}  // namespace

TopPairs top_eigenpairs(const double* g, std::size_t l, std::size_t rank) {
  const auto width = static_cast<Eigen::Index>(l);
  const Eigen::Map<const Eigen::MatrixXd> matrix(g, width, width);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(matrix.selfadjointView<Eigen::Upper>());
  if (eigen.info() != Eigen::Success) throw Failure("the eigenvectors of B B^T did not converge");
  TopPairs top;
  top.s.resize(rank);
  top.w.resize(l * rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const Eigen::Index from = width - 1 - static_cast<Eigen::Index>(i);  // ascending order
    top.s[i] = static_cast<float>(std::sqrt(std::max(0.0, eigen.eigenvalues()(from))));
    for (std::size_t r = 0; r < l; ++r)
      top.w[i * l + r] = static_cast<float>(eigen.eigenvectors()(static_cast<Eigen::Index>(r), from));
  }
  return top;
}

Svd truncated_svd_cpu(const CsrView& view, const SvdOptions& options, std::size_t l) {
  StepClock clock;
  const Sparse a = to_eigen(view);
  const Sparse at = a.transpose();
  clock("matrices");
  const auto cols = static_cast<Eigen::Index>(view.cols), width = static_cast<Eigen::Index>(l);

  Dense omega(cols, width);
  tbb::parallel_for(Eigen::Index{0}, cols, [&](Eigen::Index c) {
    for (Eigen::Index j = 0; j < width; ++j)
      omega(c, j) = test_entry(options.seed, static_cast<std::uint64_t>(c), static_cast<std::uint64_t>(j));
  });
  clock("omega");
  Dense y, z;
  product(a, omega, y);
  omega = Dense();
  clock("A.omega");
  for (int q = 0; q < options.power_iterations; ++q) {
    orthonormalize(y, 1);
    clock("orth Y");
    product(at, y, z);
    clock("A^T.Q");
    orthonormalize(z, 1);
    clock("orth Z");
    product(a, z, y);
    clock("A.Z");
  }
  orthonormalize(y);  // Q
  clock("orth Y");
  product(at, y, z);  // Z = A^T Q = B^T
  clock("A^T.Q");

  // B B^T = Z^T Z (l x l) in float64, its eigenvectors W and eigenvalues s^2.
  const Eigen::MatrixXd zd = z.cast<double>();
  Eigen::MatrixXd g(width, width);
  cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, static_cast<int>(width), static_cast<int>(cols), 1.0, zd.data(),
              static_cast<int>(cols), 0.0, g.data(), static_cast<int>(width));
  TopPairs top = top_eigenpairs(g.data(), l, options.rank);
  clock("B.B^T eigen");

  Svd out;
  out.rows = view.rows;
  out.cols = view.cols;
  out.rank = options.rank;
  const auto rank = static_cast<Eigen::Index>(options.rank);
  const Dense w = Eigen::Map<const Eigen::MatrixXf>(top.w.data(), width, rank);  // the top eigenvectors, largest first
  out.s = std::move(top.s);
  const Dense u = multiply(y, w);  // U = Q W
  Dense v = multiply(z, w);        // V = Z W / s
  for (Eigen::Index i = 0; i < rank; ++i) {
    const float s = out.s[static_cast<std::size_t>(i)];
    v.col(i) *= s > 0 ? 1.0f / s : 0.0f;
  }
  clock("U, V");
  out.u.assign(u.data(), u.data() + u.size());
  out.v.assign(v.data(), v.data() + v.size());
  return out;
}

}  // namespace simkit::embed::detail
