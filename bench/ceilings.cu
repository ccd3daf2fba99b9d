#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <vector>

#include "ceilings.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"

namespace simkit::bench {

namespace {

__global__ void fill_random(float* x, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = static_cast<float>(h & 0xFFFF) / 65536.0f - 0.5f;
  }
}

template <typename T>
__global__ void convert(const float* in, T* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<T>(in[i]);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Fn>
double time_ms(cudaStream_t stream, int reps, Fn&& fn) {
  cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
  fn();  // warm-up
  fn();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    start.record(stream);
    fn();
    stop.record(stream);
    times.push_back(cuda::elapsed_ms(start, stop));
  }
  return median(times);
}

}  // namespace

GpuCeilings measure_gpu_ceilings(int device) {
  cuda::DeviceGuard guard(device);
  GpuCeilings c;
  cuda::Stream stream;
  {
    const std::size_t n = std::size_t{1} << 29;  // 2 GiB of floats each way
    cuda::DeviceBuffer<float> a(n), b(n);
    fill_random<<<1024, 256, 0, stream.get()>>>(a.get(), n, 1);
    const double ms = time_ms(stream.get(), 10, [&] {
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), n * sizeof(float), cudaMemcpyDeviceToDevice, stream.get()));
    });
    c.copy_tb_s = 2.0 * n * sizeof(float) / (ms * 1e-3) / 1e12;
  }
  const int m = 8192;
  const std::size_t n = std::size_t{m} * m;
  cuda::DeviceBuffer<float> a(n), b(n), out(n);
  fill_random<<<1024, 256, 0, stream.get()>>>(a.get(), n, 2);
  fill_random<<<1024, 256, 0, stream.get()>>>(b.get(), n, 3);
  cublasHandle_t handle;
  SIMKIT_CUBLAS_CHECK(cublasCreate(&handle));
  SIMKIT_CUBLAS_CHECK(cublasSetStream(handle, stream.get()));
  const float one = 1, zero = 0;
  const double flop = 2.0 * m * m * m;
  const auto gemm = [&](const void* x, const void* y, cudaDataType_t type, cublasComputeType_t compute) {
    return flop / (time_ms(stream.get(), 5, [&] {
                     SIMKIT_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, x, type, m, y,
                                                      type, m, &zero, out.get(), CUDA_R_32F, m, compute,
                                                      CUBLAS_GEMM_DEFAULT));
                   }) * 1e-3) / 1e12;
  };
  c.fp32_tflop_s = gemm(a.get(), b.get(), CUDA_R_32F, CUBLAS_COMPUTE_32F);
  c.tf32_tflop_s = gemm(a.get(), b.get(), CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
  {
    cuda::DeviceBuffer<__nv_bfloat16> x(n), y(n);
    convert<<<1024, 256, 0, stream.get()>>>(a.get(), x.get(), n);
    convert<<<1024, 256, 0, stream.get()>>>(b.get(), y.get(), n);
    c.bf16_tflop_s = gemm(x.get(), y.get(), CUDA_R_16BF, CUBLAS_COMPUTE_32F);
  }
  {
    cuda::DeviceBuffer<__half> x(n), y(n);
    convert<<<1024, 256, 0, stream.get()>>>(a.get(), x.get(), n);
    convert<<<1024, 256, 0, stream.get()>>>(b.get(), y.get(), n);
    c.fp16_tflop_s = gemm(x.get(), y.get(), CUDA_R_16F, CUBLAS_COMPUTE_32F);
  }
  cublasDestroy(handle);
  stream.sync();
  return c;
}

}  // namespace simkit::bench
