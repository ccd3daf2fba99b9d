// dense_top_k's GPU path in a CPU-only build: it says so.
#include "engine/dense_topk.hpp"
#include "simkit/error.hpp"

namespace simkit::detail {

PairwiseResult dense_top_k_gpu(const float*, std::size_t, const float*, std::size_t, std::size_t,
                               const DenseTopKOptions&, const PairwiseJob&) {
  throw UsageError("dense top k on a GPU: this simkit was built without CUDA");
}

}  // namespace simkit::detail
