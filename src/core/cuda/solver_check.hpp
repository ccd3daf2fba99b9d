// cuSOLVER and cuSPARSE statuses checked like CUDA's (core/cuda/check.hpp): a failure
// becomes a simkit::Failure naming the call and its place.
#pragma once

#include <cusolverDn.h>
#include <cusparse.h>

#include <string>

#include "simkit/error.hpp"

#define SIMKIT_CUSOLVER_CHECK(call)                                                              \
  do {                                                                                           \
    const cusolverStatus_t simkit_status_ = (call);                                              \
    if (simkit_status_ != CUSOLVER_STATUS_SUCCESS)                                               \
      throw ::simkit::Failure(std::string("cuSOLVER error ") + std::to_string(int(simkit_status_)) + \
                              " in " #call " at " __FILE__ ":" + std::to_string(__LINE__));      \
  } while (0)

#define SIMKIT_CUSPARSE_CHECK(call)                                                                  \
  do {                                                                                               \
    const cusparseStatus_t simkit_status_ = (call);                                                  \
    if (simkit_status_ != CUSPARSE_STATUS_SUCCESS)                                                   \
      throw ::simkit::Failure(std::string("cuSPARSE error ") + cusparseGetErrorString(simkit_status_) + \
                              " in " #call " at " __FILE__ ":" + std::to_string(__LINE__));          \
  } while (0)
