// Host-to-device copies of pageable memory (a memory-mapped model, a vector) through a
// few pinned buffers that all cores fill. The driver stages a pageable copy through the
// calling thread alone (6-8 GB/s measured on the GPU machines); from pinned memory the
// transfer runs at the link's speed while the cores fill the next buffer.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/cuda/memory.hpp"

namespace simkit::cuda {

class StagedCopy {
 public:
  // `pieces` pinned buffers of `piece_bytes` each, made at the first copy (on the device
  // current then).
  explicit StagedCopy(std::size_t piece_bytes = std::size_t{8} << 20, int pieces = 4);
  ~StagedCopy();  // waits for the transfers still reading its buffers
  StagedCopy(const StagedCopy&) = delete;
  StagedCopy& operator=(const StagedCopy&) = delete;

  // Enqueues the copy of `bytes` from `host` to `device` on `stream` and returns once
  // `host` has been read; the transfer may still run (synchronize `stream` before the
  // device memory is read elsewhere).
  void copy(void* device, const void* host, std::size_t bytes, cudaStream_t stream);
  // The same for the pieces end to end (many small ones in a few transfers).
  void copy_gathered(void* device, const std::vector<std::span<const std::byte>>& pieces, cudaStream_t stream);

 private:
  // Bytes [0, bytes) to `device` a pinned buffer at a time; fill(staging, at, n) writes
  // bytes [at, at + n) of the source into staging.
  void stage(void* device, std::size_t bytes, cudaStream_t stream,
             const std::function<void(std::byte* staging, std::size_t at, std::size_t n)>& fill);

  struct Piece {
    PinnedBuffer<std::byte> buffer;
    std::optional<Event> done;  // recorded after the transfer out of `buffer`
  };
  std::size_t piece_bytes_;
  std::vector<Piece> pieces_;
  std::size_t next_ = 0;
};

}  // namespace simkit::cuda
