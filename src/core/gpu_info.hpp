// What the rest of the library may ask of the CUDA runtime without CUDA headers.
// Implemented in cuda/runtime.cu, or in no_cuda.cpp for CPU-only builds.
#pragma once

#include <string>

#include "simkit/device.hpp"

namespace simkit::detail {

bool cuda_compiled() noexcept;
int cuda_count() noexcept;
std::string cuda_name(int index);
GpuMemory cuda_memory(int index);

}  // namespace simkit::detail
