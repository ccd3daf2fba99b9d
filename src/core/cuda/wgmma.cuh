// Shared-memory layout and descriptors for Hopper's warpgroup MMA (wgmma, sm_90a), shared
// by the fused dot-product kernel and the TF32 product: K-major tiles of 128-byte rows in
// the 128-byte swizzle (16-byte chunk c of row r at c ^ (r % 8), 8-row atoms of 1024
// bytes), which is what the descriptors below describe.
#pragma once

#include <cstdint>

namespace simkit::cuda::wgmma {

// Byte offset of 16-byte chunk `chunk` of row `row` in a 128-byte-swizzled tile.
__device__ __forceinline__ unsigned swizzled(int row, int chunk) {
  return static_cast<unsigned>(row * 128 + ((chunk ^ (row & 7)) << 4));
}

// Shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row atoms 1024 bytes apart.
// Adding 2 moves it 32 bytes along K (one k16 step of halves, one k8 step of TF32).
__device__ __forceinline__ std::uint64_t descriptor(unsigned address) {
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) | (std::uint64_t{1} << 16) |
         (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}

}  // namespace simkit::cuda::wgmma
