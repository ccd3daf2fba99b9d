// The randomized truncated SVD on a GPU, the CPU's steps (src/embed/svd_cpu.cpp) with
// CUDA's libraries: the sparse matrix and its transpose (cuSPARSE's csr2csc) in
// compressed rows, every sketch column-major; products by cuSPARSE's SpMM, orthonormal
// bases by cuSOLVER's QR (geqrf, orgqr), B B^T = Z^T Z by cuBLAS in float64 and its
// eigenvectors by cuSOLVER's syevd; U and V by cuBLAS, written transposed so that they
// arrive row-major. The test matrix is made on the device from the same hash as the CPU's.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/solver_check.hpp"
#include "core/text.hpp"
#include "embed/svd.hpp"
#include "embed/test_matrix.hpp"
#include "simkit/error.hpp"

namespace simkit::embed::detail {

namespace {

// A device buffer of n zeros: the sketches and cuSOLVER's buffers start defined (initcheck
// saw cuSOLVER's QR read words of them before any write).
template <typename T>
cuda::DeviceBuffer<T> zeroed(std::size_t n) {
  cuda::DeviceBuffer<T> buffer(n);
  if (n > 0) SIMKIT_CUDA_CHECK(cudaMemset(buffer.get(), 0, n * sizeof(T)));
  return buffer;
}

unsigned blocks_for(std::size_t n, unsigned threads) {
  return static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 1u << 20));
}

// Omega (cols x l, column-major): entry (c, j) = test_entry(seed, c, j), as on the CPU.
__global__ void test_matrix_kernel(std::uint64_t seed, std::size_t cols, std::size_t l, float* omega) {
  const std::size_t count = cols * l;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < count;
       e += std::size_t{gridDim.x} * blockDim.x)
    omega[e] = test_entry(seed, e % cols, e / cols);
}

__global__ void to_double_kernel(const float* x, std::size_t n, double* y) {
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < n; e += std::size_t{gridDim.x} * blockDim.x)
    y[e] = x[e];
}

// From syevd's ascending eigenpairs of B B^T (l x l, column-major, float64): s (rank,
// descending) and the matching eigenvectors as float columns, wu (for U) and wv = wu / s
// (for V), l x rank column-major.
__global__ void top_pairs_kernel(const double* vectors, const double* values, std::size_t l, std::size_t rank,
                                 float* s, float* wu, float* wv) {
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < l * rank;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t row = e % l, i = e / l, from = l - 1 - i;
    const double sigma = sqrt(fmax(values[from], 0.0));
    const double x = vectors[from * l + row];
    wu[e] = static_cast<float>(x);
    wv[e] = sigma > 0 ? static_cast<float>(x / sigma) : 0.0f;
    if (row == 0) s[i] = static_cast<float>(sigma);
  }
}

struct Handles {
  cuda::CublasHandle blas = cuda::make_cublas();
  cusolverDnHandle_t solver = nullptr;
  cusparseHandle_t sparse = nullptr;
  Handles() {
    SIMKIT_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    SIMKIT_CUSPARSE_CHECK(cusparseCreate(&sparse));
  }
  ~Handles() {
    cusparseDestroy(sparse);
    cusolverDnDestroy(solver);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
};

// A CSR matrix on the device with its cuSPARSE descriptor (32-bit indices).
struct DeviceCsr {
  std::size_t rows = 0, cols = 0, nonzeros = 0;
  cuda::DeviceBuffer<int> offsets, columns;
  cuda::DeviceBuffer<float> values;
  cusparseSpMatDescr_t descr = nullptr;
  void describe() {
    SIMKIT_CUSPARSE_CHECK(cusparseCreateCsr(&descr, static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols),
                                            static_cast<std::int64_t>(nonzeros), offsets.get(), columns.get(),
                                            values.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  }
  DeviceCsr() = default;
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  ~DeviceCsr() {
    if (descr != nullptr) cusparseDestroySpMat(descr);
  }
};

class GpuSvd {
 public:
  GpuSvd(const CsrView& a, std::size_t l) : l_(l) {
    if (a.offsets[a.rows] > 0x7fffffffull)
      throw UsageError(cat("the GPU's SVD takes at most 2,147,483,647 nonzeros (this matrix has ", a.offsets[a.rows],
                           "); use --device cpu"));
    a_.rows = a.rows;
    a_.cols = a.cols;
    a_.nonzeros = a.offsets[a.rows];
    std::vector<int> offsets(a.rows + 1);
    for (std::size_t i = 0; i <= a.rows; ++i) offsets[i] = static_cast<int>(a.offsets[i]);
    std::vector<int> columns(a_.nonzeros);
    for (std::size_t e = 0; e < a_.nonzeros; ++e) columns[e] = static_cast<int>(a.columns[e]);
    a_.offsets = cuda::to_device(offsets.data(), offsets.size());
    a_.columns = cuda::to_device(columns.data(), columns.size());
    a_.values = cuda::to_device(a.values, a_.nonzeros);
    a_.describe();
    transpose();
  }

  // y (a's rows x l) = a x (a's cols x l), column-major.
  void product(const DeviceCsr& a, const float* x, float* y) {
    cusparseDnMatDescr_t dx = nullptr, dy = nullptr;
    SIMKIT_CUSPARSE_CHECK(cusparseCreateDnMat(&dx, static_cast<std::int64_t>(a.cols), static_cast<std::int64_t>(l_),
                                              static_cast<std::int64_t>(a.cols), const_cast<float*>(x), CUDA_R_32F,
                                              CUSPARSE_ORDER_COL));
    SIMKIT_CUSPARSE_CHECK(cusparseCreateDnMat(&dy, static_cast<std::int64_t>(a.rows), static_cast<std::int64_t>(l_),
                                              static_cast<std::int64_t>(a.rows), y, CUDA_R_32F, CUSPARSE_ORDER_COL));
    const float one = 1.0f, zero = 0.0f;
    std::size_t bytes = 0;
    SIMKIT_CUSPARSE_CHECK(cusparseSpMM_bufferSize(h_.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                  CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a.descr, dx, &zero, dy,
                                                  CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    if (bytes > work_.size()) work_ = cuda::DeviceBuffer<char>(bytes);
    SIMKIT_CUSPARSE_CHECK(cusparseSpMM(h_.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       &one, a.descr, dx, &zero, dy, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                       work_.get()));
    cusparseDestroyDnMat(dx);
    cusparseDestroyDnMat(dy);
  }

  // y (n x l, column-major) replaced by an orthonormal basis of its columns.
  void orthonormalize(float* y, std::size_t n) {
    const int rows = static_cast<int>(n), cols = static_cast<int>(l_);
    int size_qr = 0, size_q = 0;
    SIMKIT_CUSOLVER_CHECK(cusolverDnSgeqrf_bufferSize(h_.solver, rows, cols, y, rows, &size_qr));
    SIMKIT_CUSOLVER_CHECK(cusolverDnSorgqr_bufferSize(h_.solver, rows, cols, cols, y, rows, tau_.get(), &size_q));
    const std::size_t need = static_cast<std::size_t>(std::max(size_qr, size_q));
    if (need > solver_work_.size()) solver_work_ = zeroed<float>(need);
    const int lwork = static_cast<int>(solver_work_.size());
    SIMKIT_CUSOLVER_CHECK(cusolverDnSgeqrf(h_.solver, rows, cols, y, rows, tau_.get(), solver_work_.get(), lwork,
                                           info_.get()));
    SIMKIT_CUSOLVER_CHECK(cusolverDnSorgqr(h_.solver, rows, cols, cols, y, rows, tau_.get(), solver_work_.get(), lwork,
                                           info_.get()));
    check_info("QR");
  }

  Svd run(const SvdOptions& options) {
    const std::size_t rows = a_.rows, cols = a_.cols, rank = options.rank;
    cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
    start.record(nullptr);
    cuda::DeviceBuffer<float> y = zeroed<float>(rows * l_), z = zeroed<float>(cols * l_);
    test_matrix_kernel<<<blocks_for(cols * l_, 256), 256>>>(options.seed, cols, l_, z.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    product(a_, z.get(), y.get());
    for (int q = 0; q < options.power_iterations; ++q) {
      orthonormalize(y.get(), rows);
      product(at_, y.get(), z.get());
      orthonormalize(z.get(), cols);
      product(a_, z.get(), y.get());
    }
    orthonormalize(y.get(), rows);   // Q
    product(at_, y.get(), z.get());  // Z = A^T Q = B^T

    // B B^T = Z^T Z in float64 and its eigenpairs (ascending).
    cuda::DeviceBuffer<double> zd(cols * l_), g(l_ * l_), values(l_);
    to_double_kernel<<<blocks_for(cols * l_, 256), 256>>>(z.get(), cols * l_, zd.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    const double one = 1.0, zero = 0.0;
    SIMKIT_CUBLAS_CHECK(cublasDsyrk(h_.blas.get(), CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, static_cast<int>(l_),
                                    static_cast<int>(cols), &one, zd.get(), static_cast<int>(cols), &zero, g.get(),
                                    static_cast<int>(l_)));
    zd = cuda::DeviceBuffer<double>();
    int size_eig = 0;
    SIMKIT_CUSOLVER_CHECK(cusolverDnDsyevd_bufferSize(h_.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER,
                                                      static_cast<int>(l_), g.get(), static_cast<int>(l_),
                                                      values.get(), &size_eig));
    cuda::DeviceBuffer<double> eig_work = zeroed<double>(static_cast<std::size_t>(std::max(size_eig, 1)));
    SIMKIT_CUSOLVER_CHECK(cusolverDnDsyevd(h_.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER,
                                           static_cast<int>(l_), g.get(), static_cast<int>(l_), values.get(),
                                           eig_work.get(), size_eig, info_.get()));
    check_info("syevd");
    cuda::DeviceBuffer<float> s(rank), wu(l_ * rank), wv(l_ * rank);
    top_pairs_kernel<<<blocks_for(l_ * rank, 256), 256>>>(g.get(), values.get(), l_, rank, s.get(), wu.get(),
                                                          wv.get());
    SIMKIT_CUDA_CHECK_LAUNCH();

    // U^T = Wu^T Q^T (rank x rows, column-major: U row-major), V^T = Wv^T Z^T.
    cuda::DeviceBuffer<float> u(rows * rank), v(cols * rank);
    const float onef = 1.0f, zerof = 0.0f;
    const auto transposed_product = [&](const float* w, const float* basis, std::size_t n, float* out) {
      SIMKIT_CUBLAS_CHECK(cublasSgemm(h_.blas.get(), CUBLAS_OP_T, CUBLAS_OP_T, static_cast<int>(rank),
                                      static_cast<int>(n), static_cast<int>(l_), &onef, w, static_cast<int>(l_), basis,
                                      static_cast<int>(n), &zerof, out, static_cast<int>(rank)));
    };
    transposed_product(wu.get(), y.get(), rows, u.get());
    transposed_product(wv.get(), z.get(), cols, v.get());
    stop.record(nullptr);

    Svd out;
    out.rows = rows;
    out.cols = cols;
    out.rank = rank;
    out.u.resize(rows * rank);
    out.v.resize(cols * rank);
    out.s.resize(rank);
    SIMKIT_CUDA_CHECK(cudaMemcpy(out.u.data(), u.get(), out.u.size() * sizeof(float), cudaMemcpyDeviceToHost));
    SIMKIT_CUDA_CHECK(cudaMemcpy(out.v.data(), v.get(), out.v.size() * sizeof(float), cudaMemcpyDeviceToHost));
    SIMKIT_CUDA_CHECK(cudaMemcpy(out.s.data(), s.get(), rank * sizeof(float), cudaMemcpyDeviceToHost));
    out.device_ms = cuda::elapsed_ms(start, stop);
    return out;
  }

 private:
  // A^T in compressed rows: A's compressed columns (csr2csc).
  void transpose() {
    at_.rows = a_.cols;
    at_.cols = a_.rows;
    at_.nonzeros = a_.nonzeros;
    at_.offsets = cuda::DeviceBuffer<int>(at_.rows + 1);
    at_.columns = cuda::DeviceBuffer<int>(std::max<std::size_t>(at_.nonzeros, 1));
    at_.values = cuda::DeviceBuffer<float>(std::max<std::size_t>(at_.nonzeros, 1));
    std::size_t bytes = 0;
    SIMKIT_CUSPARSE_CHECK(cusparseCsr2cscEx2_bufferSize(
        h_.sparse, static_cast<int>(a_.rows), static_cast<int>(a_.cols), static_cast<int>(a_.nonzeros),
        a_.values.get(), a_.offsets.get(), a_.columns.get(), at_.values.get(), at_.offsets.get(), at_.columns.get(),
        CUDA_R_32F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes));
    cuda::DeviceBuffer<char> work(std::max<std::size_t>(bytes, 1));
    SIMKIT_CUSPARSE_CHECK(cusparseCsr2cscEx2(
        h_.sparse, static_cast<int>(a_.rows), static_cast<int>(a_.cols), static_cast<int>(a_.nonzeros),
        a_.values.get(), a_.offsets.get(), a_.columns.get(), at_.values.get(), at_.offsets.get(), at_.columns.get(),
        CUDA_R_32F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work.get()));
    at_.describe();
  }

  void check_info(const char* what) {
    int info = 0;
    SIMKIT_CUDA_CHECK(cudaMemcpy(&info, info_.get(), sizeof info, cudaMemcpyDeviceToHost));
    if (info != 0) throw Failure(cat("cuSOLVER ", what, " failed (info ", info, ")"));
  }

  std::size_t l_;
  Handles h_;
  DeviceCsr a_, at_;
  cuda::DeviceBuffer<char> work_;
  cuda::DeviceBuffer<float> tau_ = zeroed<float>(l_), solver_work_;
  cuda::DeviceBuffer<int> info_ = zeroed<int>(1);
};

}  // namespace

Svd truncated_svd_gpu(const CsrView& a, const SvdOptions& options, std::size_t l) {
  const cuda::DeviceGuard guard(options.device);
  GpuSvd svd(a, l);
  return svd.run(options);
}

void warm_up_gpu(const SvdOptions& options, std::size_t l) {
  // A banded matrix of side 2 l (a few nonzeros a row): every step's kernels at this l.
  const std::size_t side = 2 * l;
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint32_t> columns;
  std::vector<float> values;
  for (std::size_t i = 0; i < side; ++i) {
    for (std::size_t d = 0; d < 3; ++d) {
      columns.push_back(static_cast<std::uint32_t>((i + d * 7) % side));
      values.push_back(1.0f + static_cast<float>((i * 31 + d) % 17));
    }
    std::sort(columns.end() - 3, columns.end());
    offsets.push_back(columns.size());
  }
  const CsrView small{side, side, offsets.data(), columns.data(), values.data()};
  truncated_svd_gpu(small, options, l);
}

}  // namespace simkit::embed::detail
