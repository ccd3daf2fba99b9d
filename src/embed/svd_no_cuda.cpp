// The GPU SVD of a CPU-only build: it says so.
#include "embed/svd.hpp"
#include "simkit/error.hpp"

namespace simkit::embed::detail {

Svd truncated_svd_gpu(const CsrView&, const SvdOptions&, std::size_t, const WordVectors*) {
  throw Failure("this simkit was built without CUDA");
}

void warm_up_gpu(const SvdOptions&, std::size_t) {}

}  // namespace simkit::embed::detail
