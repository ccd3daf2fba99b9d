// Probe: how fast are cuSOLVER's and cuBLAS's batched float64 routines at the shapes of
// a CCA step (p 256, q 512: the joint 768 x 768 Cholesky, the 256 x 256 one, a
// triangular solve, a product and the eigenvalues of a 256 x 256 matrix), for batches of
// steps? Decides how the tracker solves many report steps at once.
//   nvcc -arch=sm_90 -O2 bench/probes/cca_batched.cu -lcublas -lcusolver -o cca_probe
//   ./cca_probe                       (prints one line per routine and batch size)
// Results: bench/results/cca.md (design notes).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#define CK(x)                                                                  \
  do {                                                                         \
    auto e_ = (x);                                                             \
    if (static_cast<int>(e_) != 0) {                                           \
      std::fprintf(stderr, "error %d at %s:%d: %s\n", int(e_), __FILE__, __LINE__, #x); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void fill_random(double* x, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned long long z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
  }
}

__global__ void add_diagonal(double* a, int n, std::size_t stride, int batch, double v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[blockIdx.y * stride + i + static_cast<std::size_t>(i) * n] += v;
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    cudaEventCreate(&a);
    cudaEventCreate(&b);
  }
};

template <typename F>
double median_ms(F&& f, int reps = 5) {
  static Timer t;
  std::vector<float> ms;
  f();
  f();
  CK(cudaDeviceSynchronize());
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(t.a));
    f();
    CK(cudaEventRecord(t.b));
    CK(cudaEventSynchronize(t.b));
    float x;
    cudaEventElapsedTime(&x, t.a, t.b);
    ms.push_back(x);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// batch SPD matrices n x n: R R^T / n + I, R n x n random
void make_spd(cublasHandle_t blas, double* out, int n, int batch, double* scratch) {
  fill_random<<<1024, 256>>>(scratch, std::size_t(n) * n * batch, 7);
  const double alpha = 1.0 / n, beta = 0;
  CK(cublasDgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, scratch, n, std::size_t(n) * n, scratch,
                               n, std::size_t(n) * n, &beta, out, n, std::size_t(n) * n, batch));
  add_diagonal<<<dim3((n + 127) / 128, batch), 128>>>(out, n, std::size_t(n) * n, batch, 1.0);
}

int main() {
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  CK(cublasCreate(&blas));
  CK(cusolverDnCreate(&solver));
  cusolverDnParams_t params;
  CK(cusolverDnCreateParams(&params));
  const int max_batch = 256;
  const int big = 768, small = 256;
  double *pristine, *work, *scratch, *values, *rhs;
  int* info;
  CK(cudaMalloc(&pristine, sizeof(double) * big * big * max_batch));
  CK(cudaMalloc(&work, sizeof(double) * big * big * max_batch));
  CK(cudaMalloc(&scratch, sizeof(double) * big * big * max_batch));
  CK(cudaMalloc(&rhs, sizeof(double) * big * big * max_batch));
  CK(cudaMalloc(&values, sizeof(double) * big * max_batch));
  CK(cudaMalloc(&info, sizeof(int) * max_batch));
  double** ptrs;
  double** rptrs;
  CK(cudaMallocManaged(&ptrs, sizeof(double*) * max_batch));
  CK(cudaMallocManaged(&rptrs, sizeof(double*) * max_batch));

  for (int n : {big, 512, small}) {
    make_spd(blas, pristine, n, max_batch, scratch);
    const std::size_t stride = std::size_t(n) * n;
    for (int b = 0; b < max_batch; ++b) ptrs[b] = work + b * stride;
    CK(cudaDeviceSynchronize());
    const double copy_ms = median_ms([&] { cudaMemcpyAsync(work, pristine, sizeof(double) * stride * max_batch, cudaMemcpyDeviceToDevice); });
    for (int batch : {1, 32, 128, 256}) {
      const double ms = median_ms([&] {
        cudaMemcpyAsync(work, pristine, sizeof(double) * stride * batch, cudaMemcpyDeviceToDevice);
        CK(cusolverDnDpotrfBatched(solver, CUBLAS_FILL_MODE_LOWER, n, ptrs, n, info, batch));
      });
      std::vector<int> h(batch);
      cudaMemcpy(h.data(), info, sizeof(int) * batch, cudaMemcpyDeviceToHost);
      int bad = 0;
      for (int v : h) bad += v != 0;
      std::printf("potrfBatched n %4d batch %4d: %9.3f ms  %8.1f us/matrix  (copy of all %d: %.3f ms) bad %d\n", n, batch,
                  ms, 1000 * ms / batch, max_batch, copy_ms, bad);
    }
    // one matrix at a time, the 64-bit API
    {
      size_t dev_bytes = 0, host_bytes = 0;
      CK(cusolverDnXpotrf_bufferSize(solver, params, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, work, n, CUDA_R_64F,
                                     &dev_bytes, &host_bytes));
      void* dwork;
      CK(cudaMalloc(&dwork, dev_bytes + 8));
      std::vector<char> hwork(host_bytes + 8);
      const int batch = 32;
      const double ms = median_ms([&] {
        cudaMemcpyAsync(work, pristine, sizeof(double) * stride * batch, cudaMemcpyDeviceToDevice);
        for (int b = 0; b < batch; ++b)
          CK(cusolverDnXpotrf(solver, params, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, work + b * stride, n, CUDA_R_64F,
                              dwork, dev_bytes, hwork.data(), host_bytes, info));
      });
      std::printf("Xpotrf loop    n %4d batch %4d: %9.3f ms  %8.1f us/matrix\n", n, batch, ms, 1000 * ms / batch);
      cudaFree(dwork);
    }
  }

  // Triangular solves and products at 256: T = L^-1 R (L lower 256, R 256 x 256).
  {
    const int n = small;
    const std::size_t stride = std::size_t(n) * n;
    make_spd(blas, pristine, n, max_batch, scratch);
    for (int b = 0; b < max_batch; ++b) ptrs[b] = work + b * stride;
    cudaMemcpy(work, pristine, sizeof(double) * stride * max_batch, cudaMemcpyDeviceToDevice);
    CK(cusolverDnDpotrfBatched(solver, CUBLAS_FILL_MODE_LOWER, n, ptrs, n, info, max_batch));
    for (int b = 0; b < max_batch; ++b) rptrs[b] = rhs + b * stride;
    fill_random<<<1024, 256>>>(scratch, stride * max_batch, 9);
    CK(cudaDeviceSynchronize());
    const double one = 1, zero = 0;
    for (int batch : {32, 128, 256}) {
      const double ms = median_ms([&] {
        cudaMemcpyAsync(rhs, scratch, sizeof(double) * stride * batch, cudaMemcpyDeviceToDevice);
        CK(cublasDtrsmBatched(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n,
                              &one, ptrs, n, rptrs, n, batch));
      });
      std::printf("trsmBatched    256x256 batch %4d: %9.3f ms  %8.1f us/matrix\n", batch, ms, 1000 * ms / batch);
      const double gms = median_ms([&] {
        CK(cublasDgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, rhs, n, stride, rhs, n, stride,
                                     &zero, scratch + stride * max_batch / 2, n, stride, batch / 2));
      });
      std::printf("gemmStrided    256^3   batch %4d: %9.3f ms  %8.1f us/matrix  %.1f TFLOP/s\n", batch / 2, gms,
                  1000 * gms / (batch / 2), 2.0 * n * n * n * (batch / 2) / gms / 1e9);
    }
    // a 768 x 512 x 768 product, the covariance-sized one
    {
      const int batch = 64;
      const double gms = median_ms([&] {
        CK(cublasDgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_T, 512, 256, 512, &one, work, 512, 512 * 512, work,
                                     256, 512 * 256, &zero, rhs, 512, 512 * 256, batch));
      });
      std::printf("gemmStrided 512x256x512 batch %4d: %9.3f ms  %.1f TFLOP/s\n", batch, gms,
                  2.0 * 512 * 256 * 512 * batch / gms / 1e9);
    }
  }

  // Eigenvalues of 256 x 256 symmetric matrices.
  for (int n : {256, 64}) {
    const std::size_t stride = std::size_t(n) * n;
    make_spd(blas, pristine, n, max_batch, scratch);
    CK(cudaDeviceSynchronize());
    for (int batch : {1, 16, 64, 128, 256}) {
      size_t dev_bytes = 0, host_bytes = 0;
      CK(cusolverDnXsyevBatched_bufferSize(solver, params, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                           CUDA_R_64F, work, n, CUDA_R_64F, values, CUDA_R_64F, &dev_bytes, &host_bytes,
                                           batch));
      void* dwork;
      CK(cudaMalloc(&dwork, dev_bytes + 8));
      std::vector<char> hwork(host_bytes + 8);
      const double ms = median_ms(
          [&] {
            cudaMemcpyAsync(work, pristine, sizeof(double) * stride * batch, cudaMemcpyDeviceToDevice);
            CK(cusolverDnXsyevBatched(solver, params, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F,
                                      work, n, CUDA_R_64F, values, CUDA_R_64F, dwork, dev_bytes, hwork.data(),
                                      host_bytes, info, batch));
          },
          3);
      std::printf("XsyevBatched   n %4d batch %4d: %9.3f ms  %8.1f us/matrix (work %.1f MB)\n", n, batch, ms,
                  1000 * ms / batch, dev_bytes / 1e6);
      cudaFree(dwork);
    }
    // syevd one at a time
    {
      int lwork = 0;
      CK(cusolverDnDsyevd_bufferSize(solver, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, n, work, n, values,
                                     &lwork));
      double* dwork;
      CK(cudaMalloc(&dwork, sizeof(double) * lwork));
      const int batch = 16;
      const double ms = median_ms([&] {
        cudaMemcpyAsync(work, pristine, sizeof(double) * stride * batch, cudaMemcpyDeviceToDevice);
        for (int b = 0; b < batch; ++b)
          CK(cusolverDnDsyevd(solver, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, n, work + b * stride, n,
                              values, dwork, lwork, info));
      });
      std::printf("syevd loop     n %4d batch %4d: %9.3f ms  %8.1f us/matrix\n", n, batch, ms, 1000 * ms / batch);
      cudaFree(dwork);
    }
  }
  std::printf("done\n");
  return 0;
}
