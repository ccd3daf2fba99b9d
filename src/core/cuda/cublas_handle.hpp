// A cuBLAS handle that is destroyed with its owner (owned_handle.hpp).
#pragma once

#include <cublas_v2.h>

#include "core/cuda/check.hpp"
#include "core/cuda/owned_handle.hpp"

namespace simkit::cuda {

using CublasHandle = OwnedHandle<cublasHandle_t, cublasDestroy>;

inline CublasHandle make_cublas() {
  cublasHandle_t h = nullptr;
  SIMKIT_CUBLAS_CHECK(cublasCreate(&h));
  return own_handle<cublasHandle_t, cublasDestroy>(h);
}

}  // namespace simkit::cuda
