// The GPU matcher of a CPU-only build: it says so.
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

std::vector<Match> match_all_gpu(const std::vector<ctph::Prepared>&, int, int, double*, Share) {
  throw Failure("this simkit was built without CUDA");
}

}  // namespace simkit::dedup
