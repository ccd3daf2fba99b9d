// Probe: how long each GPU's context takes to make, one GPU at a time or a thread a GPU.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
using Clock = std::chrono::steady_clock;
static double since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
int main(int argc, char** argv) {
  const bool parallel = argc > 1 && std::strcmp(argv[1], "parallel") == 0;
  const bool with_blas = argc > 2;
  const auto t0 = Clock::now();
  int n = 0;
  cudaGetDeviceCount(&n);
  std::printf("count %d in %.1f ms\n", n, since(t0));
  std::vector<double> done(n), took(n);
  const auto one = [&](int d) {
    const auto s = Clock::now();
    cudaSetDevice(d);
    cudaFree(nullptr);
    took[d] = since(s);
    if (with_blas) {
      cublasHandle_t h;
      cublasCreate(&h);
      float *a;
      cudaMalloc(&a, 512 * 512 * 4 * 3);
      const float one = 1, zero = 0;
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 512, 512, &one, a, 512, a + 512 * 512, 512, &zero, a + 2 * 512 * 512, 512);
      cudaDeviceSynchronize();
      cudaFree(a);
    }
    done[d] = since(t0);
  };
  const auto t1 = Clock::now();
  if (parallel) {
    std::vector<std::thread> ts;
    for (int d = 0; d < n; ++d) ts.emplace_back(one, d);
    for (auto& t : ts) t.join();
  } else {
    for (int d = 0; d < n; ++d) one(d);
  }
  for (int d = 0; d < n; ++d) std::printf("%s gpu %d: context in %.1f ms, ready at %.1f ms\n", parallel ? "parallel" : "serial", d, took[d], done[d]);
  std::printf("%s: all %d in %.1f ms\n", parallel ? "parallel" : "serial", n, since(t1));
}
