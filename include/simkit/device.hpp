// Where work runs: the CPU or CUDA devices, chosen by --device auto|cpu|cuda[:N|:all|:N,M,...].
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simkit {

struct DeviceSpec {
  enum class Kind { Auto, Cpu, Cuda } kind = Kind::Auto;
  int index = 0;             // the (first) CUDA ordinal named, for Kind::Cuda
  bool named = false;        // cuda:N or a list: else each rank of a host takes its own GPU
  std::vector<int> indices;  // cuda:N,M,...: every ordinal named
  bool all = false;          // cuda:all: every GPU of the machine
};

// Parses "auto", "cpu", "cuda", "cuda:N", "cuda:all", "cuda:N,M,...", and the same with
// "gpu". Throws UsageError otherwise.
DeviceSpec parse_device(std::string_view text);

struct Device {
  bool cuda = false;
  int index = 0;             // the first (often the only) GPU
  std::string name;          // "cpu" or the GPU's name
  std::vector<int> indices;  // every GPU this process drives (index first); empty on the CPU
};

// True when this build contains the CUDA paths.
bool cuda_built() noexcept;
// Number of usable CUDA devices (0 when not built with CUDA or no driver/GPU).
int cuda_device_count() noexcept;
// True once cuda_device_count() (which resolve_device calls) has found a device: this
// process has started the CUDA driver.
bool cuda_started() noexcept;

// Auto takes a GPU when the build has CUDA and one is present, else the CPU; auto and
// "cuda" take GPU 0, or under mpirun GPU (local rank mod GPUs), so that the ranks of a host
// share its GPUs out. An explicit cuda request that cannot be met throws UsageError.
Device resolve_device(const DeviceSpec& spec);

// The driver starts every GPU a process can see, one after another (about 0.12 s each on
// an H200, bench/results/distributed.md "Four GPUs"), whichever the job uses. A program that
// knows its GPUs before the driver starts can hide the others through CUDA_VISIBLE_DEVICES:
// `variable` is what to set it to, and `device` the --device text naming the same GPUs
// among those left visible (cuda:2 -> "2" and "cuda:0"; cuda:1,3 -> "1,3" and "cuda:0,1").
struct VisibleGpus {
  std::string variable;
  std::string device;
};
// For `spec` parsed from `device_text`: cuda:N and cuda:N,M,..., and in a process that is
// not one rank of several (`alone`), auto and cuda (both take the first GPU). Nothing for
// cpu, cuda:all, a rank's own GPU (it needs the count), MIG instances, or an ordinal past
// the GPUs known: those named by `visible` (CUDA_VISIBLE_DEVICES's value, null when unset;
// read as CUDA reads it, up to the first entry that is neither an ordinal below
// `driver_gpus` (when known, else any) nor a GPU's UUID; entries kept as written) or else
// the driver's `driver_gpus`. The ordinals are CUDA's (in CUDA_DEVICE_ORDER's order).
std::optional<VisibleGpus> visible_gpus_for(const DeviceSpec& spec, std::string_view device_text, const char* visible,
                                            std::size_t driver_gpus, bool alone);
// Sets CUDA_VISIBLE_DEVICES as visible_gpus_for says, and `device_text` to its `device`,
// unless the CUDA driver has started in this process already (it has then read the
// variable) or this build has no CUDA. Call it before any thread uses CUDA. Returns
// whether it narrowed the GPUs.
bool hide_unused_gpus(std::string& device_text);

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
