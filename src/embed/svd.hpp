// Internal: the randomized SVD's device paths (src/embed/svd_cpu.cpp, src/embed/cuda/svd.cu).
#pragma once

#include <vector>

#include "simkit/embed.hpp"

namespace simkit::embed::detail {

// Halko et al.'s steps on the CPU: Eigen's sparse products in parallel row blocks, LAPACK
// (OpenBLAS) for the orthonormal bases, float64 for B B^T and its eigenvectors.
Svd truncated_svd_cpu(const CsrView& a, const SvdOptions& options, std::size_t l);

// Word vectors of the triplets (embed::vectors): row w = (u_w + v_w) s^eig, or u_w s^eig
// without the contexts, for w < a.rows.
struct WordVectors {
  double eig = 0.5;
  bool add_contexts = true;
};
// The weight s_i^eig of each dimension (1 when eig is 0).
std::vector<float> eigen_weights(const std::vector<float>& s, double eig);

// The `rank` largest eigenpairs of the symmetric l x l matrix g = B B^T (float64,
// column-major, its upper triangle read): s_i = sqrt(lambda_i), descending, and their
// eigenvectors as float columns (w: l x rank, column-major). Both devices' SVDs end so.
// Throws Failure when the eigenvectors do not converge.
struct TopPairs {
  std::vector<float> s, w;
};
TopPairs top_eigenpairs(const double* g, std::size_t l, std::size_t rank);

// The same steps on CUDA device options.device: cuSPARSE products, cuSOLVER QR, cuBLAS
// products; B B^T's eigenpairs (l x l) on the host, as the CPU's. With `vectors`, the word vectors are made on the device
// and returned in u (v left empty), so that half the bytes come back. Throws Failure
// without CUDA.
Svd truncated_svd_gpu(const CsrView& a, const SvdOptions& options, std::size_t l,
                      const WordVectors* vectors = nullptr);

// Readies device options.device for truncated_svd_gpu while the host does other work
// (embed counts the corpus meanwhile): creates the context and the libraries' handles and
// launches every kernel the SVD uses on a small matrix, so that they are loaded before
// the real matrix arrives.
// Without CUDA, does nothing.
void warm_up_gpu(const SvdOptions& options, std::size_t l);

}  // namespace simkit::embed::detail
