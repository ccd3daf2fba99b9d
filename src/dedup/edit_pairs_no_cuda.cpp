// The GPU edit-distance pairs of a CPU-only build: it says so.
#include "dedup/edit_distance.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

std::vector<EditPair> edit_pairs_gpu(const StringSet&, const StringSet&, bool, PairRule, EditKernel, int, double*) {
  throw Failure("this simkit was built without CUDA");
}

}  // namespace simkit::dedup
