// A cuSOLVER dense handle that is destroyed with its owner (owned_handle.hpp).
#pragma once

#include <cusolverDn.h>

#include "core/cuda/owned_handle.hpp"
#include "core/cuda/solver_check.hpp"

namespace simkit::cuda {

using SolverHandle = OwnedHandle<cusolverDnHandle_t, cusolverDnDestroy>;

inline SolverHandle make_solver() {
  cusolverDnHandle_t h = nullptr;
  SIMKIT_CUSOLVER_CHECK(cusolverDnCreate(&h));
  return own_handle<cusolverDnHandle_t, cusolverDnDestroy>(h);
}

}  // namespace simkit::cuda
