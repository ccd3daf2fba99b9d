// The GPU trainer of a CPU-only build: it says so.
#include "lvq/trainer.hpp"
#include "simkit/error.hpp"

namespace simkit::lvq::detail {

std::unique_ptr<Trainer> gpu_trainer(const Dataset&, const Model&, const TrainOptions&) {
  throw Failure("this simkit was built without CUDA");
}

}  // namespace simkit::lvq::detail
