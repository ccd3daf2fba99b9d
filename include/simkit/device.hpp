// Where work runs: the CPU or a CUDA device, chosen by --device auto|cpu|cuda[:N].
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace simkit {

struct DeviceSpec {
  enum class Kind { Auto, Cpu, Cuda } kind = Kind::Auto;
  int index = 0;  // CUDA ordinal for Kind::Cuda
};

// Parses "auto", "cpu", "cuda", "cuda:N", "gpu", "gpu:N". Throws UsageError otherwise.
DeviceSpec parse_device(std::string_view text);

struct Device {
  bool cuda = false;
  int index = 0;
  std::string name;  // "cpu" or the GPU's name
};

// True when this build contains the CUDA paths.
bool cuda_built() noexcept;
// Number of usable CUDA devices (0 when not built with CUDA or no driver/GPU).
int cuda_device_count() noexcept;

// Auto takes CUDA device 0 when the build has CUDA and a GPU is present, else the CPU.
// An explicit cuda request that cannot be met throws UsageError saying why.
Device resolve_device(const DeviceSpec& spec);

struct GpuMemory {
  std::size_t free = 0;
  std::size_t total = 0;
};
// Free and total memory of a CUDA device (cudaMemGetInfo). Throws Failure without CUDA.
GpuMemory gpu_memory(int index);

// Parses sizes such as "512M", "2G", "1.5GiB", "300000000" (bytes; K/M/G/T are powers
// of 1024). Throws UsageError on anything else or a size of zero.
std::size_t parse_byte_size(std::string_view text);
std::string format_byte_size(std::size_t bytes);

}  // namespace simkit
