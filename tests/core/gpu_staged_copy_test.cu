// StagedCopy (core/cuda/staged_copy.hpp): pageable host bytes reach the device unchanged
// at sizes below, at and across its pinned pieces (the ring of buffers wrapping round),
// and copies from several calls in a row land where each one says. PageLock
// (core/cuda/memory.hpp): memory locked in place copies unchanged; locking it again
// leaves it as it is (and copies still work); moved and released locks unlock once;
// lock_once locks a holder's large spans the first time only, and unlocks them with it.
// DeviceGuard gives a thread back the context it had, none where it had none; a lock let
// go on a thread without a context leaves it without one (unlocked through its device), as
// do device and pinned memory, streams, events and cuBLAS handles let go there.
#include <gtest/gtest.h>

#include <cuda.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/staged_copy.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

TEST(GpuStagedCopy, BytesArriveUnchangedAtEverySize) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  constexpr std::size_t kPiece = std::size_t{1} << 20;  // small pieces: many turns of the ring
  const std::size_t sizes[] = {0, 1, kPiece - 1, kPiece, 3 * kPiece + 12345, 11 * kPiece + 7};
  cuda::StagedCopy staged(kPiece, 3);
  cuda::Stream stream;
  for (const std::size_t bytes : sizes) {
    SCOPED_TRACE(bytes);
    std::vector<std::uint8_t> host(bytes);
    for (auto& b : host) b = static_cast<std::uint8_t>(random.engine()());
    cuda::DeviceBuffer<std::uint8_t> device(bytes + 1);
    staged.copy(device.get(), host.data(), bytes, stream.get());
    stream.sync();
    std::vector<std::uint8_t> back(bytes);
    if (bytes > 0) SIMKIT_CUDA_CHECK(cudaMemcpy(back.data(), device.get(), bytes, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(back == host);
  }
  // Two halves copied by two calls, the second while the first's pieces may be in flight.
  const std::size_t half = 5 * kPiece + 3;
  std::vector<std::uint8_t> host(2 * half);
  for (auto& b : host) b = static_cast<std::uint8_t>(random.engine()());
  cuda::DeviceBuffer<std::uint8_t> device(host.size());
  staged.copy(device.get(), host.data(), half, stream.get());
  staged.copy(device.get() + half, host.data() + half, half, stream.get());
  stream.sync();
  std::vector<std::uint8_t> back(host.size());
  SIMKIT_CUDA_CHECK(cudaMemcpy(back.data(), device.get(), back.size(), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(back == host);
}

TEST(GpuPageLock, LockedMemoryCopiesUnchangedAndUnlocksOnce) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::uint32_t> host(cuda::kPageLockMinBytes / 4 + 12345);
  for (auto& v : host) v = static_cast<std::uint32_t>(random.engine()());
  const auto round_trip = [&] {
    const cuda::DeviceBuffer<std::uint32_t> device = cuda::to_device(host.data(), host.size());
    std::vector<std::uint32_t> back(host.size());
    SIMKIT_CUDA_CHECK(cudaMemcpy(back.data(), device.get(), back.size() * 4, cudaMemcpyDeviceToHost));
    return back == host;
  };
  {
    cuda::PageLock lock(host.data(), host.size() * 4);
    EXPECT_TRUE(lock.locked());
    EXPECT_TRUE(cuda::page_locked(host.data()));
    EXPECT_TRUE(round_trip());
    const cuda::PageLock again(host.data(), host.size() * 4);  // already locked: left as it is
    EXPECT_FALSE(again.locked());
    EXPECT_TRUE(round_trip());
    cuda::PageLock moved(std::move(lock));
    EXPECT_TRUE(moved.locked());
    EXPECT_FALSE(lock.locked());
  }  // unlocked once, by `moved`
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FALSE(cuda::page_locked(host.data()));
  const cuda::PageLock relocked(host.data(), host.size() * 4);
  EXPECT_TRUE(relocked.locked());
  EXPECT_TRUE(round_trip());
  EXPECT_FALSE(cuda::PageLock(nullptr, 0).locked());
}

// `bytes` of host memory on pages of their own (so that locking one span cannot lock a
// neighbour's page).
std::shared_ptr<std::uint8_t> own_pages(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = std::aligned_alloc(page, (bytes + page - 1) / page * page);
  if (p == nullptr) throw std::bad_alloc();
  return {static_cast<std::uint8_t*>(p), [](std::uint8_t* q) { std::free(q); }};
}

TEST(GpuPageLock, LockOnceLocksTheLargeSpansTheFirstTimeAndUnlocksWithTheHolder) {
  SIMKIT_REQUIRE_GPU();
  const std::size_t large_bytes = cuda::kPageLockMinBytes, small_bytes = cuda::kPageLockMinBytes - 1;
  const auto large = own_pages(large_bytes), small = own_pages(small_bytes), later = own_pages(large_bytes);
  {
    PageLockedOnce held;
    cuda::lock_once(held, {{large.get(), large_bytes}, {small.get(), small_bytes}});
    EXPECT_TRUE(cuda::page_locked(large.get()));
    EXPECT_FALSE(cuda::page_locked(small.get()));  // under kPageLockMinBytes: copied as it is
    cuda::lock_once(held, {{later.get(), large_bytes}});  // locked once already: nothing more
    EXPECT_FALSE(cuda::page_locked(later.get()));
  }
  EXPECT_FALSE(cuda::page_locked(large.get()));
}

// The calling thread's driver context (null: none).
CUcontext current_context() {
  static const auto get = reinterpret_cast<CUresult (*)(CUcontext*)>(cuda::driver_function("cuCtxGetCurrent", 4000));
  CUcontext context = nullptr;
  EXPECT_EQ(get(&context), CUDA_SUCCESS);
  return context;
}

// Whether GPU 0's primary context is made (active).
bool gpu0_context_made() {
  static const auto device_get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(cuda::driver_function("cuDeviceGet", 2000));
  static const auto state = reinterpret_cast<CUresult (*)(CUdevice, unsigned*, int*)>(
      cuda::driver_function("cuDevicePrimaryCtxGetState", 7000));
  CUdevice device{};
  unsigned flags = 0;
  int active = 0;
  EXPECT_EQ(device_get(&device, 0), CUDA_SUCCESS);
  EXPECT_EQ(state(device, &flags, &active), CUDA_SUCCESS);
  return active != 0;
}

// The GPUs seen, and a check that GPU 0's context stays unmade: possible on two GPUs or more
// in a process that has not yet used GPU 0 (ctest runs each test in its own).
struct Gpu0Watch {
  int count = 0;
  bool unused = false;  // GPU 0's context not yet made when the watch began
  Gpu0Watch() {
    EXPECT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
    unused = count > 1 && !gpu0_context_made();
  }
  void expect_still_unused() const {
    if (unused) EXPECT_FALSE(gpu0_context_made());
  }
};

TEST(GpuDeviceGuard, GivesTheThreadBackItsContextOrNone) {
  SIMKIT_REQUIRE_GPU();
  const Gpu0Watch gpus;
  const int last = gpus.count - 1;
  // A fresh thread has no context; the guard's device is current inside it, and none after
  // (not GPU 0's, which the runtime would name: its context is not made).
  std::thread([&] {
    const CUcontext before = current_context();
    EXPECT_EQ(before, nullptr);
    {
      const cuda::DeviceGuard guard(last);
      int device = -1;
      EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
      EXPECT_EQ(device, last);
      EXPECT_NE(current_context(), nullptr);
    }
    EXPECT_EQ(current_context(), nullptr);
  }).join();
  gpus.expect_still_unused();
  // A thread on GPU 0 is on GPU 0 again after a guard for the last GPU (and for GPU 0).
  std::thread([&] {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    const CUcontext own = current_context();
    for (const int other : {last, 0}) {
      { const cuda::DeviceGuard guard(other); }
      int device = -1;
      EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
      EXPECT_EQ(device, 0);
      EXPECT_EQ(current_context(), own);
    }
  }).join();
}

TEST(GpuPageLock, LetGoOnAThreadWithoutAContextLeavesItWithout) {
  SIMKIT_REQUIRE_GPU();
  const Gpu0Watch gpus;  // nothing below may make GPU 0's context
  std::vector<std::uint8_t> host(cuda::kPageLockMinBytes);
  std::optional<cuda::PageLock> lock;
  std::thread([&] {
    const cuda::DeviceGuard guard(gpus.count - 1);
    lock.emplace(host.data(), host.size());
  }).join();
  ASSERT_TRUE(lock->locked());
  // (The runtime, asked to unlock on a thread without a context, would make device 0's
  // current there.)
  std::thread([&] {
    EXPECT_EQ(current_context(), nullptr);
    lock.reset();
    EXPECT_EQ(current_context(), nullptr);
  }).join();
  gpus.expect_still_unused();
  EXPECT_FALSE(cuda::page_locked(host.data()));
}

// One of each CUDA handle, made on one device.
struct Handles {
  using PinnedVector = std::vector<std::uint32_t, UninitializedAllocator<std::uint32_t>>;
  std::optional<cuda::DeviceBuffer<float>> device_memory;
  std::optional<cuda::PinnedBuffer<std::uint32_t>> pinned;
  std::optional<PinnedVector> pinned_answer;
  std::optional<cuda::Stream> stream;
  std::optional<cuda::Event> event;
  std::optional<cuda::CublasHandle> blas;
  const void* pinned_at = nullptr;
  const void* pinned_answer_at = nullptr;

  void make_on(int device) {
    std::thread([&] {
      const cuda::DeviceGuard guard(device);
      device_memory.emplace(4096);
      pinned.emplace(4096);
      pinned_answer.emplace(PinnedVector::allocator_type(cuda::pinned_host_memory()));
      pinned_answer->resize(4096);
      stream.emplace();
      event.emplace();
      event->record(stream->get());
      blas.emplace(cuda::make_cublas());
      stream->sync();
      pinned_at = pinned->get();
      pinned_answer_at = pinned_answer->data();
      EXPECT_TRUE(cuda::page_locked(pinned_at));
      EXPECT_TRUE(cuda::page_locked(pinned_answer_at));
    }).join();
  }
  void let_go() {
    device_memory.reset();
    pinned.reset();
    pinned_answer.reset();
    event.reset();
    stream.reset();
    blas.reset();
  }
};

TEST(GpuHandles, LetGoOnAThreadWithoutAContextLeaveItWithout) {
  SIMKIT_REQUIRE_GPU();
  const Gpu0Watch gpus;
  const int count = gpus.count, last = count - 1;
  // Each handle made on the last GPU, then let go on a fresh thread: each goes through its
  // own device, and the thread is left without a context (nor is GPU 0's made).
  if (count > 1 && !gpus.unused) std::printf("(GPU 0's context made before this test: run it alone to check it is not)\n");
  Handles handles;
  handles.make_on(last);
  std::thread([&] {
    EXPECT_EQ(current_context(), nullptr);
    handles.let_go();
    EXPECT_EQ(current_context(), nullptr);
  }).join();
  gpus.expect_still_unused();
  std::thread([&] {
    const cuda::DeviceGuard guard(last);
    EXPECT_FALSE(cuda::page_locked(handles.pinned_at));
    EXPECT_FALSE(cuda::page_locked(handles.pinned_answer_at));
  }).join();
  // Let go on a thread holding GPU 0: that thread still holds GPU 0 after.
  if (count < 2) return;
  handles.make_on(last);
  std::thread([&] {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    const CUcontext own = current_context();
    handles.let_go();
    int device = -1;
    EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
    EXPECT_EQ(device, 0);
    EXPECT_EQ(current_context(), own);
  }).join();
}

}  // namespace
}  // namespace simkit
