// The order of every ranking on the GPU, as simkit::ranks_before on the host: higher
// score first, equal scores by lower index.
#pragma once

#include <cstdint>

namespace simkit::cuda {

__device__ __forceinline__ bool ranks_before(float sa, std::uint32_t ia, float sb, std::uint32_t ib) {
  return sa > sb || (sa == sb && ia < ib);
}

// The key of an empty slot (-inf, with index 0xffffffff): it ranks after every entry.
__device__ __forceinline__ float empty_key() { return -__int_as_float(0x7f800000); }

// A running top list (best first; slot s at keys[s * stride], indices[s * stride]) takes
// (key, index), which must rank before its last slot; the last entry is dropped.
__device__ __forceinline__ void insert_sorted(float* keys, std::uint32_t* indices, int top, float key,
                                              std::uint32_t index, int stride = 1) {
  int at = top - 1;
  for (; at > 0 && ranks_before(key, index, keys[(at - 1) * stride], indices[(at - 1) * stride]); --at) {
    keys[at * stride] = keys[(at - 1) * stride];
    indices[at * stride] = indices[(at - 1) * stride];
  }
  keys[at * stride] = key;
  indices[at * stride] = index;
}

}  // namespace simkit::cuda
