// A cuBLAS handle that is destroyed with its owner.
#pragma once

#include <cublas_v2.h>

#include <memory>
#include <type_traits>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"

namespace simkit::cuda {

struct CublasDestroy {
  int device = 0;  // the handle's (asked once it is made): destroyed through it
  void operator()(cublasHandle_t h) const {
    const QuietDeviceGuard guard(device);
    cublasDestroy(h);
  }
};
using CublasHandle = std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, CublasDestroy>;

inline CublasHandle make_cublas() {
  cublasHandle_t h = nullptr;
  SIMKIT_CUBLAS_CHECK(cublasCreate(&h));
  return CublasHandle(h, CublasDestroy{current_device()});  // (asked after: memory.hpp says why)
}

}  // namespace simkit::cuda
