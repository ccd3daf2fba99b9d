// Probe: ways to move 226 MB of host entries to the GPU.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <cstdlib>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a) { return std::chrono::duration<double, std::milli>(clk::now() - a).count(); }
int main(int argc, char** argv) {
  const size_t bytes = (argc > 1 ? atol(argv[1]) : 226) << 20;
  const int threads = argc > 2 ? atoi(argv[2]) : 8;
  cudaFree(0);
  std::vector<char> host(bytes);
  for (size_t i = 0; i < bytes; i += 4096) host[i] = char(i);
  memset(host.data(), 1, bytes);
  void* d; cudaMalloc(&d, bytes);
  for (int rep = 0; rep < 2; ++rep) {
    auto t = clk::now(); cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice); printf("pageable cudaMemcpy %.1f ms\n", ms(t));
    t = clk::now(); cudaMemcpyAsync(d, host.data(), bytes, cudaMemcpyHostToDevice, 0); cudaDeviceSynchronize(); printf("pageable async %.1f ms\n", ms(t));
    // register in place
    t = clk::now(); cudaError_t e = cudaHostRegister(host.data(), bytes, cudaHostRegisterDefault); double reg = ms(t);
    t = clk::now(); cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice); double cp = ms(t);
    t = clk::now(); cudaHostUnregister(host.data()); printf("register %.1f ms (%d), copy %.1f ms, unregister %.1f ms\n", reg, (int)e, cp, ms(t));
    // pinned ring
    for (size_t chunk : {size_t(4) << 20, size_t(16) << 20}) {
      const int slots = 4;
      t = clk::now(); char* ring; cudaMallocHost(&ring, chunk * slots); double alloc = ms(t);
      cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      cudaEvent_t ev[slots]; for (auto& x : ev) cudaEventCreateWithFlags(&x, cudaEventDisableTiming);
      t = clk::now();
      size_t n = 0;
      for (size_t off = 0; off < bytes; off += chunk, ++n) {
        const size_t len = std::min(chunk, bytes - off);
        char* slot = ring + (n % slots) * chunk;
        if (n >= slots) cudaEventSynchronize(ev[n % slots]);
        std::vector<std::thread> ts;
        for (int k = 0; k < threads; ++k) ts.emplace_back([&, k] { size_t a = len * k / threads, b = len * (k + 1) / threads; memcpy(slot + a, host.data() + off + a, b - a); });
        for (auto& x : ts) x.join();
        cudaMemcpyAsync((char*)d + off, slot, len, cudaMemcpyHostToDevice, s);
        cudaEventRecord(ev[n % slots], s);
      }
      cudaStreamSynchronize(s);
      double ring_ms = ms(t);
      t = clk::now(); cudaFreeHost(ring); printf("ring %zu MB x %d, %d threads: alloc %.1f ms, copy %.1f ms, free %.1f ms\n", chunk >> 20, slots, threads, alloc, ring_ms, ms(t));
    }
    t = clk::now(); char* big; cudaMallocHost(&big, bytes); double a2 = ms(t);
    t = clk::now(); cudaMemcpy(d, big, bytes, cudaMemcpyHostToDevice); double c2 = ms(t);
    t = clk::now(); cudaFreeHost(big); printf("cudaMallocHost whole %.1f ms, pinned copy %.1f ms, free %.1f ms\n", a2, c2, ms(t));
    t = clk::now(); void* d2; cudaMalloc(&d2, 64 << 20); double m = ms(t); t = clk::now(); cudaFree(d2); printf("cudaMalloc 64 MiB %.2f ms, free %.2f ms\n", m, ms(t));
    t = clk::now(); cudaMalloc(&d2, 1000 << 20); m = ms(t); t = clk::now(); cudaFree(d2); printf("cudaMalloc 1000 MiB %.2f ms, free %.2f ms\n", m, ms(t));
    t = clk::now(); cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf("cudaGetDeviceProperties %.2f ms\n", ms(t));
  }
}
