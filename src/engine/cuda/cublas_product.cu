// A product of row blocks on cuBLAS with one operand's rows read rotated (cublas_product.hpp).
#include "engine/cuda/cublas_product.hpp"

#include "core/cuda/check.hpp"
#include "core/text.hpp"
#include "simkit/error.hpp"

namespace simkit::cuda {

void rotated_product(cublasHandle_t h, cudaDataType type, cublasComputeType_t compute, const void* a,
                     std::size_t rows, const void* b, std::size_t cols, std::size_t k, std::size_t r, float* tile,
                     std::size_t ld, cudaStream_t stream) {
  if (k == 0) {
    SIMKIT_CUDA_CHECK(cudaMemset2DAsync(tile, ld * sizeof(float), 0, cols * sizeof(float), rows, stream));
    return;
  }
  if (rows > 0x7fffffff || cols > 0x7fffffff || k > 0x7fffffff || ld > 0x7fffffff)
    throw UsageError(cat("a product of ", rows, " x ", cols, " x ", k, " is too large for cuBLAS"));
  const std::size_t bytes = type == CUDA_R_16F || type == CUDA_R_16BF ? 2 : type == CUDA_R_64F ? 8 : 4;
  const auto* a0 = static_cast<const char*>(a);
  const auto* b0 = static_cast<const char*>(b);
  const float one = 1, zero = 0;
  // Row-major tile = A' B^T is column-major tile^T = B^T' A'.
  const auto product = [&](const char* from_a, const char* from_b, std::size_t depth, const float* beta) {
    SIMKIT_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(cols), static_cast<int>(rows),
                                     static_cast<int>(depth), &one, from_b, type, static_cast<int>(k), from_a, type,
                                     static_cast<int>(k), beta, tile, CUDA_R_32F, static_cast<int>(ld), compute,
                                     CUBLAS_GEMM_DEFAULT));
  };
  product(a0 + r * bytes, b0, k - r, &zero);
  if (r > 0) product(a0, b0 + (k - r) * bytes, r, &one);
}

}  // namespace simkit::cuda
