// Internal, CUDA only: a product of row blocks on cuBLAS, one operand's rows read rotated,
// shared by the fused jobs' cuBLAS baselines and DISCO's dense scorer.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace simkit::cuda {

// tile (rows x cols, row-major, stride ld) = A' . B^T on h (whose stream is `stream`),
// where a and b point at the first of `rows` and `cols` rows of k elements of `type`
// (row-major, row stride k) and A' reads A's rows from column r on, wrapping:
// A_{r..k} . B_{0..k-r}^T + A_{0..r} . B_{k-r..k}^T. On DISCO's rows [M|A] with r = k / 2
// that is A_a.M_b^T + M_a.A_b^T, Lin's numerators. k = 0 zeroes the tile.
void rotated_product(cublasHandle_t h, cudaDataType type, cublasComputeType_t compute, const void* a,
                     std::size_t rows, const void* b, std::size_t cols, std::size_t k, std::size_t r, float* tile,
                     std::size_t ld, cudaStream_t stream);

}  // namespace simkit::cuda
