// The order of every ranking on the GPU, as simkit::ranks_before on the host: higher
// score first, equal scores by lower index.
#pragma once

#include <cstdint>

namespace simkit::cuda {

__device__ __forceinline__ bool ranks_before(float sa, std::uint32_t ia, float sb, std::uint32_t ib) {
  return sa > sb || (sa == sb && ia < ib);
}

}  // namespace simkit::cuda
