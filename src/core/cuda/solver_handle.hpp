// A cuSOLVER dense handle that is destroyed with its owner, as cublas_handle.hpp's.
#pragma once

#include <cusolverDn.h>

#include <memory>
#include <type_traits>

#include "core/cuda/memory.hpp"
#include "core/cuda/solver_check.hpp"

namespace simkit::cuda {

struct SolverDestroy {
  int device = 0;  // the handle's (asked once it is made): destroyed through it
  void operator()(cusolverDnHandle_t h) const {
    const QuietDeviceGuard guard(device);
    cusolverDnDestroy(h);
  }
};
using SolverHandle = std::unique_ptr<std::remove_pointer_t<cusolverDnHandle_t>, SolverDestroy>;

inline SolverHandle make_solver() {
  cusolverDnHandle_t h = nullptr;
  SIMKIT_CUSOLVER_CHECK(cusolverDnCreate(&h));
  return SolverHandle(h, SolverDestroy{current_device()});  // (asked after: memory.hpp says why)
}

}  // namespace simkit::cuda
