// Every CUDA and cuBLAS status is checked; a failure becomes a simkit::Failure that
// names the call site and the runtime's own words.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace simkit::cuda {

[[noreturn]] void throw_cuda(cudaError_t status, const char* what, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t status, const char* what, const char* file, int line);

}  // namespace simkit::cuda

#define SIMKIT_CUDA_CHECK(call)                                                    \
  do {                                                                             \
    const cudaError_t simkit_status_ = (call);                                     \
    if (simkit_status_ != cudaSuccess)                                             \
      ::simkit::cuda::throw_cuda(simkit_status_, #call, __FILE__, __LINE__);       \
  } while (0)

#define SIMKIT_CUBLAS_CHECK(call)                                                  \
  do {                                                                             \
    const cublasStatus_t simkit_status_ = (call);                                  \
    if (simkit_status_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::simkit::cuda::throw_cublas(simkit_status_, #call, __FILE__, __LINE__);     \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define SIMKIT_CUDA_CHECK_LAUNCH() SIMKIT_CUDA_CHECK(cudaGetLastError())
