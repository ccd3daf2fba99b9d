// The GPU all-pairs path of a CPU-only build: it says so.
#include "disco/gpu.hpp"
#include "simkit/error.hpp"

namespace simkit::disco::detail {

TopKLists all_pairs_gpu(const Model&, const DenseRows&, const PairwiseJob&, const AllPairsOptions&, double*) {
  throw Failure("this simkit was built without CUDA");
}

void lock_entries(const Model&, const DenseRows&, int) {}

TopKLists all_pairs_sparse_gpu(const Model&, const PairwiseJob&, const AllPairsOptions&, double*) {
  throw Failure("this simkit was built without CUDA");
}

}  // namespace simkit::disco::detail

namespace simkit::disco::detail {

double count_pairs_gpu(const PairCountJob&, std::span<std::uint64_t>, const std::function<void(std::vector<CountedRun>)>&) {
  throw Failure("this simkit was built without CUDA");
}

}  // namespace simkit::disco::detail
