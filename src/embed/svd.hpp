// Internal: the randomized SVD's device paths (src/embed/svd_cpu.cpp, src/embed/cuda/svd.cu).
#pragma once

#include "simkit/embed.hpp"

namespace simkit::embed::detail {

// Halko et al.'s steps on the CPU: Eigen's sparse products in parallel row blocks, LAPACK
// (OpenBLAS) for the orthonormal bases, float64 for B B^T and its eigenvectors.
Svd truncated_svd_cpu(const CsrView& a, const SvdOptions& options, std::size_t l);

// The same steps on CUDA device options.device: cuSPARSE products, cuSOLVER QR and
// eigenvectors, cuBLAS products. Throws Failure without CUDA.
Svd truncated_svd_gpu(const CsrView& a, const SvdOptions& options, std::size_t l);

// Readies device options.device for truncated_svd_gpu while the host does other work
// (embed counts the corpus meanwhile): creates the context and runs the same steps on a
// small matrix, so the libraries' kernels are loaded before the real matrix arrives.
// Without CUDA, does nothing.
void warm_up_gpu(const SvdOptions& options, std::size_t l);

}  // namespace simkit::embed::detail
