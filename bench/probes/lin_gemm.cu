// Probe: why does the dense Lin scorer's TF32 product run at a fifth of cuBLAS's TF32
// rate, and which call shape runs at full rate? One score tile of the DISCO job
// (T x T words, F features: A_a . M_b^T + M_a . A_b^T) done several ways:
//   interleaved  rows [M|A] (leading dimension 2F), two products (the scorer's way)
//   separate     A and M as their own matrices (leading dimension F), two products
//   workspace    separate, with a 64 MiB cuBLAS workspace set after the stream
//   lt<i>        separate, through cublasLt, the i-th of its heuristic's algorithms
//   fp16         separate, operands in fp16 (M exact, A to 11 bits as TF32), fp32 sums
//   fp32         separate, plain fp32 (CUDA cores)
//   l2-*         after the engine's L2 persistence window over the score tile
//   nvcc -arch=sm_90 -O2 bench/probes/lin_gemm.cu -lcublas -lcublasLt -o lin_probe
//   ./lin_probe [T] [F]            (default 2896 10000; prints ms and TFLOP/s a variant)
// Results: bench/results/disco.md (notes).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CK(x)                                                                           \
  do {                                                                                  \
    auto e_ = (x);                                                                      \
    if (static_cast<int>(e_) != 0) {                                                    \
      std::fprintf(stderr, "error %d at %s:%d: %s\n", int(e_), __FILE__, __LINE__, #x); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

__global__ void fill(float* a, float* m, __half* ah, __half* mh, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned long long z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    const bool on = (z & 63) == 0;  // about 1.5% of features, as the synthetic job
    const float v = on ? static_cast<float>((z >> 20) % 5000 + 1) / 1000.0f : 0.0f;
    a[i] = v;
    m[i] = on ? 1.0f : 0.0f;
    ah[i] = __float2half(v);
    mh[i] = __float2half(m[i]);
  }
}

__global__ void interleave(const float* a, const float* m, float* y, std::size_t rows, std::size_t f) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < rows * f; i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t r = i / f, c = i % f;
    y[r * 2 * f + c] = m[i];
    y[r * 2 * f + f + c] = a[i];
  }
}

template <typename F>
double time_ms(F&& run) {
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  run();
  run();
  std::vector<float> v;
  for (int i = 0; i < 5; ++i) {
    cudaEventRecord(s);
    run();
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms = 0;
    cudaEventElapsedTime(&ms, s, e);
    v.push_back(ms);
  }
  std::sort(v.begin(), v.end());
  return v[2];
}

int main(int argc, char** argv) {
  const int t = argc > 1 ? std::atoi(argv[1]) : 2896;
  const int f = argc > 2 ? std::atoi(argv[2]) : 10000;
  const std::size_t rows = 2 * static_cast<std::size_t>(t);  // block a then block b
  const std::size_t n = rows * f;
  float *a, *m, *y, *c;
  __half *ah, *mh;
  CK(cudaMalloc(&a, n * 4));
  CK(cudaMalloc(&m, n * 4));
  CK(cudaMalloc(&y, 2 * n * 4));
  CK(cudaMalloc(&ah, n * 2));
  CK(cudaMalloc(&mh, n * 2));
  CK(cudaMalloc(&c, std::size_t(t) * t * 4));
  fill<<<1024, 256>>>(a, m, ah, mh, n, 7);
  interleave<<<1024, 256>>>(a, m, y, rows, f);
  CK(cudaDeviceSynchronize());
  cublasHandle_t h;
  CK(cublasCreate(&h));
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  const double flops = 2.0 * 2.0 * t * double(t) * f;
  const float one = 1, zero = 0;
  const auto report = [&](const char* name, double ms) {
    std::printf("%-12s T %d F %d: %8.3f ms  %6.1f TFLOP/s\n", name, t, f, ms, flops / ms / 1e9);
  };
  // Column-major view: C (t_b x t_a) = B_rows^T-op ... as the scorer: op T on b rows, N on a rows.
  const auto gemm = [&](const void* bp, const void* ap, cudaDataType type, int lead, const float* beta,
                        cublasComputeType_t compute) {
    CK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, t, t, f, &one, bp, type, lead, ap, type, lead, beta, c, CUDA_R_32F, t,
                    compute, CUBLAS_GEMM_DEFAULT));
  };
  const std::size_t tb = std::size_t(t) * f;  // first row of block b, separate layout
  CK(cublasSetStream(h, stream));
  report("interleaved", time_ms([&] {
           const float* ya = y;
           const float* yb = y + std::size_t(t) * 2 * f;
           gemm(yb, ya + f, CUDA_R_32F, 2 * f, &zero, CUBLAS_COMPUTE_32F_FAST_TF32);
           gemm(yb + f, ya, CUDA_R_32F, 2 * f, &one, CUBLAS_COMPUTE_32F_FAST_TF32);
         }));
  report("separate", time_ms([&] {
           gemm(m + tb, a, CUDA_R_32F, f, &zero, CUBLAS_COMPUTE_32F_FAST_TF32);
           gemm(a + tb, m, CUDA_R_32F, f, &one, CUBLAS_COMPUTE_32F_FAST_TF32);
         }));
  void* work;
  const std::size_t work_bytes = 64u << 20;
  CK(cudaMalloc(&work, work_bytes));
  CK(cublasSetWorkspace(h, work, work_bytes));
  report("workspace", time_ms([&] {
           gemm(m + tb, a, CUDA_R_32F, f, &zero, CUBLAS_COMPUTE_32F_FAST_TF32);
           gemm(a + tb, m, CUDA_R_32F, f, &one, CUBLAS_COMPUTE_32F_FAST_TF32);
         }));
  report("ws-interl", time_ms([&] {
           const float* ya = y;
           const float* yb = y + std::size_t(t) * 2 * f;
           gemm(yb, ya + f, CUDA_R_32F, 2 * f, &zero, CUBLAS_COMPUTE_32F_FAST_TF32);
           gemm(yb + f, ya, CUDA_R_32F, 2 * f, &one, CUBLAS_COMPUTE_32F_FAST_TF32);
         }));
  report("fp16", time_ms([&] {
           gemm(mh + tb, ah, CUDA_R_16F, f, &zero, CUBLAS_COMPUTE_32F);
           gemm(ah + tb, mh, CUDA_R_16F, f, &one, CUBLAS_COMPUTE_32F);
         }));
  report("fp32", time_ms([&] {
           gemm(m + tb, a, CUDA_R_32F, f, &zero, CUBLAS_COMPUTE_32F);
           gemm(a + tb, m, CUDA_R_32F, f, &one, CUBLAS_COMPUTE_32F);
         }));

  // The engine keeps its score tile in a persisting L2 window (core/cuda/runtime.cu).
  {
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    const std::size_t bytes = std::size_t(t) * t * 4;
    const std::size_t limit = std::min<std::size_t>(bytes, prop.persistingL2CacheMaxSize);
    std::printf("L2 %d bytes, persisting max %d, window max %d\n", prop.l2CacheSize, prop.persistingL2CacheMaxSize,
                prop.accessPolicyMaxWindowSize);
    CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit));
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = c;
    attr.accessPolicyWindow.num_bytes = std::min<std::size_t>(bytes, prop.accessPolicyMaxWindowSize);
    attr.accessPolicyWindow.hitRatio = std::min(1.0f, float(limit) / float(attr.accessPolicyWindow.num_bytes));
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
    report("l2-interl", time_ms([&] {
             const float* ya = y;
             const float* yb = y + std::size_t(t) * 2 * f;
             gemm(yb, ya + f, CUDA_R_32F, 2 * f, &zero, CUBLAS_COMPUTE_32F_FAST_TF32);
             gemm(yb + f, ya, CUDA_R_32F, 2 * f, &one, CUBLAS_COMPUTE_32F_FAST_TF32);
           }));
    report("l2-fp16", time_ms([&] {
             gemm(mh + tb, ah, CUDA_R_16F, f, &zero, CUBLAS_COMPUTE_32F);
             gemm(ah + tb, mh, CUDA_R_16F, f, &one, CUBLAS_COMPUTE_32F);
           }));
    attr.accessPolicyWindow.num_bytes = 0;
    CK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
    CK(cudaCtxResetPersistingL2Cache());
    CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    report("l2-off", time_ms([&] {
             const float* ya = y;
             const float* yb = y + std::size_t(t) * 2 * f;
             gemm(yb, ya + f, CUDA_R_32F, 2 * f, &zero, CUBLAS_COMPUTE_32F_FAST_TF32);
             gemm(yb + f, ya, CUDA_R_32F, 2 * f, &one, CUBLAS_COMPUTE_32F_FAST_TF32);
           }));
  }

  // cublasLt: every algorithm its heuristic offers for the separate layout.
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, notrans = CUBLAS_OP_N;
  CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &notrans, sizeof(notrans)));
  cublasLtMatrixLayout_t la, lb, lc;
  CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, f, t, f));
  CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, f, t, f));
  CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, t, t, t));
  cublasLtMatmulPreference_t pref;
  CK(cublasLtMatmulPreferenceCreate(&pref));
  CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &work_bytes,
                                          sizeof(work_bytes)));
  cublasLtMatmulHeuristicResult_t found[8];
  int count = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8, found, &count));
  for (int i = 0; i < count; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "lt%d", i);
    report(name, time_ms([&] {
             CK(cublasLtMatmul(lt, op, &one, m + tb, la, a, lb, &zero, c, lc, c, lc, &found[i].algo, work, work_bytes,
                               stream));
             CK(cublasLtMatmul(lt, op, &one, a + tb, la, m, lb, &one, c, lc, c, lc, &found[i].algo, work, work_bytes,
                               stream));
           }));
  }
  return 0;
}
