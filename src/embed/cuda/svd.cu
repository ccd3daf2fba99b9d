// The randomized truncated SVD on a GPU, the CPU's steps (src/embed/svd_cpu.cpp) with
// CUDA's libraries: the sparse matrix and its transpose (cuSPARSE's csr2csc) in
// compressed rows, every sketch column-major; products by cuSPARSE's SpMM, orthonormal
// bases by cuSOLVER's QR (geqrf, orgqr), B B^T = Z^T Z by cuBLAS in float64 and its
// eigenvectors on the host (l x l: the CPU's own code; cuSOLVER's syevd cost 0.1-0.3 s of
// kernel loading on a fresh context, more than the rest of the SVD); U and V by cuBLAS,
// written transposed so that they arrive row-major, or the word vectors made from them
// on the device. The test matrix is made on the device from the same hash as the CPU's.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/solver_check.hpp"
#include "core/cuda/solver_handle.hpp"
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

// body() on a thread of its own with `device` current there; its result through the future.
template <typename Body>
auto on_device_thread(int device, Body body) {
  return std::async(std::launch::async, [device, body] {
    SIMKIT_CUDA_CHECK(cudaSetDevice(device));
    return body();
  });
}

struct SparseDestroy {
  void operator()(cusparseHandle_t h) const { cusparseDestroy(h); }
};

struct Handles {
  cuda::CublasHandle blas;
  cuda::SolverHandle solver_owned;
  std::unique_ptr<std::remove_pointer_t<cusparseHandle_t>, SparseDestroy> sparse_owned;
  cusolverDnHandle_t solver = nullptr;
  cusparseHandle_t sparse = nullptr;
  // Each library loads its kernels as its handle is made (a tenth of a second or more on
  // a fresh context): the three at once, cuSOLVER and cuSPARSE on threads of their own.
  // Each handle is owned as soon as it exists, so that a failure of another frees it.
  Handles() {
    int device = 0;
    SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
    auto solver_made = on_device_thread(device, [] { return cuda::make_solver(); });
    auto sparse_made = on_device_thread(device, [] {
      cusparseHandle_t h = nullptr;
      SIMKIT_CUSPARSE_CHECK(cusparseCreate(&h));
      return std::unique_ptr<std::remove_pointer_t<cusparseHandle_t>, SparseDestroy>(h);
    });
    std::exception_ptr failed;
    try {
      blas = cuda::make_cublas();
    } catch (...) {
      failed = std::current_exception();
    }
    try {
      solver_owned = solver_made.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
    try {
      sparse_owned = sparse_made.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
    if (failed) std::rethrow_exception(failed);
    solver = solver_owned.get();
    sparse = sparse_owned.get();
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

// The word vectors in place of u (rows x rank, row-major): (u + v) x weight, or u x weight.
__global__ void word_vectors_kernel(float* u, const float* v, std::size_t rows, std::size_t rank,
                                    const float* weight) {
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < rows * rank;
       e += std::size_t{gridDim.x} * blockDim.x)
    u[e] = (v != nullptr ? u[e] + v[e] : u[e]) * weight[e % rank];
}

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

  // g (l x l) = z^T z in float64, z n x l (column-major).
  void gram(const float* z, std::size_t n, double* g) {
    cuda::DeviceBuffer<double> zd(n * l_);
    to_double_kernel<<<blocks_for(n * l_, 256), 256>>>(z, n * l_, zd.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    const double one = 1.0, zero = 0.0;
    SIMKIT_CUBLAS_CHECK(cublasDsyrk(h_.blas.get(), CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, static_cast<int>(l_),
                                    static_cast<int>(n), &one, zd.get(), static_cast<int>(n), &zero, g,
                                    static_cast<int>(l_)));
  }

  // out (rank x n, column-major) = w^T basis^T, w l x rank and basis n x l.
  void transposed_product(const float* w, const float* basis, std::size_t n, std::size_t rank, float* out) {
    const float one = 1.0f, zero = 0.0f;
    SIMKIT_CUBLAS_CHECK(cublasSgemm(h_.blas.get(), CUBLAS_OP_T, CUBLAS_OP_T, static_cast<int>(rank),
                                    static_cast<int>(n), static_cast<int>(l_), &one, w, static_cast<int>(l_), basis,
                                    static_cast<int>(n), &zero, out, static_cast<int>(rank)));
  }

  // Every kernel run() uses, launched once, each library's on a thread of its own: a
  // library loads its kernels as they are first launched (0.1-0.3 s in all on a fresh
  // context, measured on an H100), so the three load side by side.
  void load_kernels(const SvdOptions& options) {
    int device = 0;
    SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
    const std::size_t rows = a_.rows, cols = a_.cols, rank = std::min(options.rank, l_);
    cuda::DeviceBuffer<float> y = zeroed<float>(rows * l_), z = zeroed<float>(cols * l_), q = zeroed<float>(rows * l_);
    auto sparse = on_device_thread(device, [&] {
      product(a_, z.get(), y.get());
      product(at_, y.get(), z.get());
    });
    auto solver = on_device_thread(device, [&] { orthonormalize(q.get(), rows); });
    cuda::DeviceBuffer<float> x(cols * l_), s = zeroed<float>(rank), w = zeroed<float>(l_ * rank), u(cols * rank);
    cuda::DeviceBuffer<double> h(l_ * l_);
    test_matrix_kernel<<<blocks_for(cols * l_, 256), 256>>>(options.seed, cols, l_, x.get());
    gram(x.get(), cols, h.get());
    transposed_product(w.get(), x.get(), cols, rank, u.get());
    word_vectors_kernel<<<blocks_for(cols * rank, 256), 256>>>(u.get(), nullptr, cols, rank, s.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    sparse.get();
    solver.get();
    SIMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  }

  Svd run(const SvdOptions& options, const WordVectors* vectors) {
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

    // B B^T = Z^T Z in float64; its top eigenpairs on the host (l x l, as the CPU's: a
    // fraction of a millisecond's copy each way): s, and Wu = W for U, Wv = W / s for V.
    cuda::DeviceBuffer<double> g = zeroed<double>(l_ * l_);  // its lower triangle comes back unwritten
    gram(z.get(), cols, g.get());
    std::vector<double> gram_host(l_ * l_);
    SIMKIT_CUDA_CHECK(cudaMemcpy(gram_host.data(), g.get(), gram_host.size() * sizeof(double), cudaMemcpyDeviceToHost));
    const TopPairs top = top_eigenpairs(gram_host.data(), l_, rank);
    std::vector<float> over_s(top.w.size());
    for (std::size_t e = 0; e < over_s.size(); ++e) {
      const float sigma = top.s[e / l_];
      over_s[e] = sigma > 0 ? top.w[e] / sigma : 0.0f;
    }
    const cuda::DeviceBuffer<float> s = cuda::to_device(top.s.data(), rank), wu = cuda::to_device(top.w.data(), top.w.size()),
                                    wv = cuda::to_device(over_s.data(), over_s.size());

    // U^T = Wu^T Q^T (rank x rows, column-major: U row-major), V^T = Wv^T Z^T.
    cuda::DeviceBuffer<float> u(rows * rank), v(cols * rank);
    transposed_product(wu.get(), y.get(), rows, rank, u.get());
    transposed_product(wv.get(), z.get(), cols, rank, v.get());
    Svd out;
    out.rows = rows;
    out.cols = cols;
    out.rank = rank;
    out.s.resize(rank);
    if (vectors != nullptr) {
      SIMKIT_CUDA_CHECK(cudaMemcpy(out.s.data(), s.get(), rank * sizeof(float), cudaMemcpyDeviceToHost));
      const std::vector<float> weights = eigen_weights(out.s, vectors->eig);
      const cuda::DeviceBuffer<float> weight = cuda::to_device(weights.data(), weights.size());
      word_vectors_kernel<<<blocks_for(rows * rank, 256), 256>>>(u.get(), vectors->add_contexts ? v.get() : nullptr,
                                                                 rows, rank, weight.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
      stop.record(nullptr);
      out.u.resize(rows * rank);
      SIMKIT_CUDA_CHECK(cudaMemcpy(out.u.data(), u.get(), out.u.size() * sizeof(float), cudaMemcpyDeviceToHost));
      out.device_ms = cuda::elapsed_ms(start, stop);
      return out;
    }
    stop.record(nullptr);
    SIMKIT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    out.u.resize(rows * rank);
    out.v.resize(cols * rank);
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

Svd truncated_svd_gpu(const CsrView& a, const SvdOptions& options, std::size_t l, const WordVectors* vectors) {
  const cuda::DeviceGuard guard(options.device);
  GpuSvd svd(a, l);
  Svd out = svd.run(options, vectors);
  return out;
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
  const cuda::DeviceGuard guard(options.device);
  GpuSvd svd(small, l);
  svd.load_kernels(options);
}

}  // namespace simkit::embed::detail
