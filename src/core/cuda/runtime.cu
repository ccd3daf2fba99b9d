#include "core/text.hpp"

#include <cuda.h>  // the driver's types (its functions come through the runtime: driver_function)

#include <algorithm>
#include <exception>
#include <memory>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "core/gpu_info.hpp"
#include "simkit/error.hpp"

namespace simkit {
namespace cuda {

void throw_cuda(cudaError_t status, const char* what, const char* file, int line) {
  cudaGetLastError();  // clear a sticky-free error so later calls are not blamed
  if (status == cudaErrorMemoryAllocation)
    throw Failure(cat("out of GPU memory in ", what, " (", file, ":", line,
                      "); try a smaller --memory-budget"));
  throw Failure(cat("CUDA error ", cudaGetErrorName(status), " (", cudaGetErrorString(status),
                    ") in ", what, " at ", file, ":", line));
}

void throw_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  throw Failure(cat("cuBLAS error ", cublasGetStatusName(status), " (",
                    cublasGetStatusString(status), ") in ", what, " at ", file, ":", line));
}

namespace {

// The driver's calls for the calling thread's current context.
struct ContextCalls {
  CUresult (*get)(CUcontext*);
  CUresult (*set)(CUcontext);
  CUresult (*pointer_attribute)(void*, CUpointer_attribute, CUdeviceptr);
};

const ContextCalls& context_calls() {
  static const ContextCalls calls{
      reinterpret_cast<CUresult (*)(CUcontext*)>(driver_function("cuCtxGetCurrent", 4000)),
      reinterpret_cast<CUresult (*)(CUcontext)>(driver_function("cuCtxSetCurrent", 4000)),
      reinterpret_cast<CUresult (*)(void*, CUpointer_attribute, CUdeviceptr)>(
          driver_function("cuPointerGetAttribute", 4000))};
  return calls;
}

// The device whose context allocated `ptr` (asked of the driver, which needs no current
// context for it); -1 where it cannot say.
int allocating_device(const void* ptr) noexcept {
  int device = -1;
  try {
    if (context_calls().pointer_attribute(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                          reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS)
      device = -1;
  } catch (const std::exception&) {
    cudaGetLastError();
  }
  return device;
}

}  // namespace

void* device_alloc(std::size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    throw Failure(cat("out of GPU memory: asked for ", format_byte_size(bytes), ", ",
                      format_byte_size(free), " free of ", format_byte_size(total),
                      "; try a smaller --memory-budget"));
  }
  SIMKIT_CUDA_CHECK(status);
  return ptr;
}

namespace {
void* pinned_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  if (cudaMallocHost(&ptr, bytes) != cudaSuccess) {
    cudaGetLastError();
    throw Failure(cat("could not page-lock ", format_byte_size(bytes), " of host memory for the GPU's answers"));
  }
  return ptr;
}
void pinned_release(void* ptr) noexcept {
  // Through the device that allocated it: answers are let go on any thread, often one
  // without a context (where the runtime would make GPU 0's to free them).
  const QuietDeviceGuard guard(allocating_device(ptr));
  if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();  // (at exit, after the runtime: left to the process's end)
}
constexpr HostMemory kPinned{pinned_allocate, pinned_release};
}  // namespace

const HostMemory* pinned_host_memory() noexcept { return &kPinned; }

bool page_locked(const void* host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

PageLock::PageLock(const void* host, std::size_t bytes) {
  if (host == nullptr || bytes == 0 || page_locked(host)) return;  // (locked already: left as it is)
  void* p = const_cast<void*>(host);  // registering does not write the memory
  if (cudaGetDevice(&device_) == cudaSuccess && cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess)
    host_ = p;
  else
    cudaGetLastError();  // copied from pageable memory instead
}

PageLock::~PageLock() {
  if (host_ == nullptr) return;
  // Through the device it was locked with: the thread that lets a job's data go often has
  // no context (its GPUs' work ran under guards), and the runtime would make GPU 0's to
  // unlock it (150 ms, for a rank on GPU 1: call 144).
  const QuietDeviceGuard guard(device_);
  if (cudaHostUnregister(host_) != cudaSuccess) cudaGetLastError();
}

void lock_once(const PageLockedOnce& held, std::initializer_list<HostSpan> spans) {
  std::call_once(held.once, [&] {
    auto locks = std::make_shared<std::vector<PageLock>>();
    for (const HostSpan& span : spans)
      if (span.bytes >= kPageLockMinBytes) locks->emplace_back(span.data, span.bytes);
    held.locks = std::move(locks);
  });
}

float elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  SIMKIT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  SIMKIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

int sm_count() {
  static int counts[64] = {};
  int device = 0;
  SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
  if (device >= 64) device = 63;  // more GPUs than any host has: ask again each time
  int& count = counts[device];
  if (count == 0) SIMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

void keep_in_l2(void* ptr, std::size_t bytes, cudaStream_t stream) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess || prop.persistingL2CacheMaxSize <= 0) return;
  const std::size_t limit = std::min<std::size_t>(bytes, static_cast<std::size_t>(prop.persistingL2CacheMaxSize));
  // The set-aside follows the window (down as well as up), and lines left persisting by
  // an earlier window go back to normal, so no stale window squeezes later work.
  std::size_t current = 0;
  cudaDeviceGetLimit(&current, cudaLimitPersistingL2CacheSize);
  if (current != limit) {
    if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
  }
  if (cudaCtxResetPersistingL2Cache() != cudaSuccess) cudaGetLastError();
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = ptr;
  attr.accessPolicyWindow.num_bytes = std::min<std::size_t>(bytes, static_cast<std::size_t>(prop.accessPolicyMaxWindowSize));
  attr.accessPolicyWindow.hitRatio =
      std::min(1.0f, static_cast<float>(limit) / static_cast<float>(attr.accessPolicyWindow.num_bytes));
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  if (cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr) != cudaSuccess) cudaGetLastError();
}

void* driver_function(const char* name, unsigned cuda_version) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  SIMKIT_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &function, cuda_version, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || function == nullptr)
    throw Failure(cat("the CUDA driver has no ", name, " (of CUDA ", cuda_version / 1000, ".", cuda_version % 1000 / 10,
                      ")"));
  return function;
}

DeviceGuard::DeviceGuard(int device) {
  CUcontext context = nullptr;
  if (context_calls().get(&context) != CUDA_SUCCESS) context = nullptr;  // (the driver not yet started: none)
  previous_ = context;
  int current = -1;
  if (context != nullptr) SIMKIT_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) SIMKIT_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() { context_calls().set(static_cast<CUcontext>(previous_)); }

int current_device() noexcept {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return device;
}

QuietDeviceGuard::QuietDeviceGuard(int device) noexcept {
  if (device < 0) return;
  try {
    guard_.emplace(device);
  } catch (const std::exception&) {
    cudaGetLastError();
  }
}

}  // namespace cuda

namespace detail {

bool cuda_compiled() noexcept { return true; }

int cuda_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::string cuda_name(int index) {
  cudaDeviceProp prop{};
  SIMKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return prop.name;
}

GpuMemory cuda_memory(int index) {
  cuda::DeviceGuard guard(index);
  GpuMemory memory;
  SIMKIT_CUDA_CHECK(cudaMemGetInfo(&memory.free, &memory.total));
  return memory;
}

}  // namespace detail
}  // namespace simkit
