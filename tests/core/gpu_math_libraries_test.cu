// cuBLAS and cuSPARSE as simkit reaches them (core/cuda/math_libraries.cpp: loaded on
// first use, each function found by name): the functions that need no GPU answer as the
// libraries do, so the loading and the lookup work on any machine with the toolkit.
#include <gtest/gtest.h>

#include <cublas_v2.h>
#include <cusparse.h>

#include <string>

namespace simkit {
namespace {

TEST(MathLibraries, ForwardToTheLibraries) {
  EXPECT_EQ(std::string(cublasGetStatusName(CUBLAS_STATUS_NOT_INITIALIZED)), "CUBLAS_STATUS_NOT_INITIALIZED");
  EXPECT_EQ(std::string(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE)), "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_FALSE(std::string(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE)).empty());
  EXPECT_FALSE(std::string(cusparseGetErrorString(CUSPARSE_STATUS_INVALID_VALUE)).empty());
}

}  // namespace
}  // namespace simkit
