// How long a process takes to start the CUDA driver and make each visible GPU's context.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
int main() {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  int count = 0;
  cudaGetDeviceCount(&count);
  const auto t1 = clock::now();
  std::printf("driver started, %d GPUs: %.1f ms", count, std::chrono::duration<double, std::milli>(t1 - t0).count());
  auto last = t1;
  for (int d = 0; d < count; ++d) {
    cudaSetDevice(d);
    cudaFree(nullptr);
    const auto t = clock::now();
    std::printf("; GPU %d context: %.1f ms", d, std::chrono::duration<double, std::milli>(t - last).count());
    last = t;
  }
  std::printf("\n");
}
