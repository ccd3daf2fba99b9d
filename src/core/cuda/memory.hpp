// Owning handles for device memory, pinned host memory, streams and events.
#pragma once

#include <mutex>

#include <cuda_runtime.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <utility>

#include "core/cuda/check.hpp"
#include "core/page_locked_once.hpp"
#include "simkit/uninitialized_allocator.hpp"

namespace simkit::cuda {

// Raw device allocation; out-of-memory is reported with the size asked for.
void* device_alloc(std::size_t bytes);

// Selects `device` for the calling thread for the lifetime of the guard, then gives the
// thread back the context it had: none where it had none (the runtime names device 0
// then, and selecting it would make GPU 0's context for a job on another GPU).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  void* previous_ = nullptr;  // the thread's driver context before (a CUcontext; null: none)
};

// The calling thread's current device: the one an allocation, stream or event just made
// belongs to (ask after making it: on a thread whose guard has ended the runtime still
// names the guard's device, yet makes GPU 0's context for the next call). 0 where the
// runtime cannot say.
int current_device() noexcept;

// For destructors and cleanup paths: `device` selected while this lives, where the driver
// allows it (at the process's end it may not: then nothing; nor for a device below 0, not
// known), never throwing. What they let go (device memory, pinned memory, streams, events,
// locks) goes through its own device: on a thread without a context the runtime would make
// GPU 0's to do it (150 ms for a rank on GPU 1, call 144), and on a thread holding another
// GPU it would ask the wrong one.
class QuietDeviceGuard {
 public:
  explicit QuietDeviceGuard(int device) noexcept;

 private:
  std::optional<DeviceGuard> guard_;
};

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count > 0) {
      ptr_ = static_cast<T*>(device_alloc(count * sizeof(T)));
      device_ = current_device();
    }
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)), device_(o.device_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
      device_ = o.device_;
    }
    return *this;
  }
  void reset() noexcept {
    if (ptr_ != nullptr) {
      const QuietDeviceGuard guard(device_);
      cudaFree(ptr_);
    }
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0;  // where it was allocated: freed through it
};

// A device copy of host elements (at least one element, so that the pointer is valid).
template <typename T>
DeviceBuffer<T> to_device(const T* host, std::size_t count) {
  DeviceBuffer<T> device(count > 0 ? count : 1);
  if (count > 0) SIMKIT_CUDA_CHECK(cudaMemcpy(device.get(), host, count * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

// Host memory page-locked in place (cudaHostRegister, for every device) while this lives:
// copies from it run at the link's rate, where pageable memory goes through the driver's
// staging at a fraction of it (226 MB: 26-30 ms pageable against 8 ms to lock, 4 ms to
// copy and 3.5 ms to unlock on an H200's host). Memory that cannot be locked (already
// locked, or not allowed) is left as it is: copies from it still work. Make it with a
// device current (under a DeviceGuard): on a thread without a context the runtime would
// make GPU 0's, and the lock is let go through the device it was made with.
class PageLock {
 public:
  PageLock() = default;
  PageLock(const void* host, std::size_t bytes);
  ~PageLock();
  PageLock(PageLock&& o) noexcept : host_(std::exchange(o.host_, nullptr)), device_(o.device_) {}
  PageLock& operator=(PageLock&& o) noexcept {
    std::swap(host_, o.host_);
    std::swap(device_, o.device_);
    return *this;
  }
  bool locked() const noexcept { return host_ != nullptr; }

 private:
  void* host_ = nullptr;
  int device_ = 0;  // the device current when locked: unlocked through it
};

// Whether host memory is page-locked (registered, or allocated pinned), asked of its first
// byte (a span only part of which is locked reads as locked or not by that byte).
bool page_locked(const void* host);

// Arrays under this are copied as they are (a few milliseconds at most to gain).
inline constexpr std::size_t kPageLockMinBytes = std::size_t{16} << 20;

// Host memory (start, bytes) to lock.
struct HostSpan {
  const void* data;
  std::size_t bytes;
};

// Each span of at least kPageLockMinBytes page-locked, the first time `held` is passed
// (the others wait for it); unlocked when `held` goes.
void lock_once(const PageLockedOnce& held, std::initializer_list<HostSpan> spans);

// Page-locked host memory as an allocator's source (simkit/uninitialized_allocator.hpp):
// a vector of it receives device copies directly, at the link's full rate.
const HostMemory* pinned_host_memory() noexcept;

template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    if (count > 0) {
      SIMKIT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
      device_ = current_device();
    }
  }
  ~PinnedBuffer() {
    if (ptr_ == nullptr) return;
    const QuietDeviceGuard guard(device_);
    cudaFreeHost(ptr_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)), device_(o.device_) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    std::swap(device_, o.device_);
    return *this;
  }
  T* get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0;  // current when allocated: freed through it
};

class Stream {
 public:
  Stream() {
    SIMKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    device_ = current_device();
  }
  // A stream whose kernels' blocks the device schedules before those of ordinary streams
  // waiting beside them (the device's greatest priority).
  struct Urgent {};
  explicit Stream(Urgent) {
    int least = 0, greatest = 0;
    SIMKIT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SIMKIT_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
    device_ = current_device();
  }
  ~Stream() {
    if (stream_ == nullptr) return;
    const QuietDeviceGuard guard(device_);
    cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }
  void sync() const { SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
  int device_ = 0;  // the stream's: destroyed through it
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDisableTiming) {
    SIMKIT_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
    device_ = current_device();
  }
  ~Event() {
    if (event_ == nullptr) return;
    const QuietDeviceGuard guard(device_);
    cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream) { SIMKIT_CUDA_CHECK(cudaEventRecord(event_, stream)); }

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = 0;  // the event's: destroyed through it
};

// Milliseconds between two timing events (both recorded, the second completed).
float elapsed_ms(const Event& start, const Event& stop);

// Asks the L2 cache to keep [ptr, ptr + bytes) resident for kernels on `stream` (a score
// tile written by one kernel and read by the next). Best effort: does nothing where the
// device has no persisting L2 or refuses.
void keep_in_l2(void* ptr, std::size_t bytes, cudaStream_t stream);

// Multiprocessors of the current device (asked once per device).
int sm_count();

// Lets Kernel take up to `bytes` of dynamic shared memory on the current device; asked of
// the runtime once a device (a function's attributes belong to each device's context: a
// process driving several GPUs sets them on each).
template <auto Kernel>
void allow_dynamic_shared(std::size_t bytes) {
  constexpr int kDevices = 64;
  static std::once_flag done[kDevices];
  int device = 0;
  SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
  const auto set = [bytes] {
    SIMKIT_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  };
  if (device < 0 || device >= kDevices) return set();
  std::call_once(done[device], set);
}

// A CUDA driver function by name, through the runtime (simkit does not link the driver's
// library); throws Failure naming it where the driver lacks it.
void* driver_function(const char* name, unsigned cuda_version);

}  // namespace simkit::cuda
