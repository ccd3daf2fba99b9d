// Probe: does compute-sanitizer initcheck see what a cuBLAS GEMM writes?
// C is allocated and never initialised; cublasGemmEx writes all of it (beta = 0), then a
// kernel reads every element. A report means initcheck missed cuBLAS's stores.
//   nvcc -arch=sm_90 -O2 bench/probes/initcheck_cublas.cu -lcublas -o probe
//   compute-sanitizer --tool initcheck ./probe N MODE M K   (MODE 0 fp32, 1 tf32, 2 fp16)
// Results: bench/results/compute-sanitizer.md.
#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>

__global__ void read_all(const float* c, std::size_t n, float* out) {
  float s = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += c[i];
  atomicAdd(out, s);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 5;
  const int mode = argc > 2 ? std::atoi(argv[2]) : 0;
  const int m = argc > 3 ? std::atoi(argv[3]) : 6000;
  const int k = argc > 4 ? std::atoi(argv[4]) : 300;
  const std::size_t element = mode == 2 ? 2 : 4;
  cublasHandle_t handle;
  cublasCreate(&handle);
  void *a, *b;
  float *c, *out;
  cudaMalloc(&a, static_cast<std::size_t>(m) * k * element);
  cudaMalloc(&b, static_cast<std::size_t>(n) * k * element);
  cudaMemset(a, 0, static_cast<std::size_t>(m) * k * element);
  cudaMemset(b, 0, static_cast<std::size_t>(n) * k * element);
  cudaMalloc(&c, static_cast<std::size_t>(m) * n * sizeof(float));  // not initialised
  cudaMalloc(&out, sizeof(float));
  cudaMemset(out, 0, sizeof(float));
  const float one = 1, zero = 0;
  const cudaDataType type = mode == 2 ? CUDA_R_16F : CUDA_R_32F;
  const cublasComputeType_t compute = mode == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const cublasStatus_t status = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, type, k, b, type,
                                             k, &zero, c, CUDA_R_32F, m, compute, CUBLAS_GEMM_DEFAULT);
  read_all<<<64, 256>>>(c, static_cast<std::size_t>(m) * n, out);
  const cudaError_t error = cudaDeviceSynchronize();
  std::printf("n=%d mode=%d m=%d k=%d gemm=%d sync=%s\n", n, mode, m, k, static_cast<int>(status),
              cudaGetErrorString(error));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(out);
  cublasDestroy(handle);
  return 0;
}
