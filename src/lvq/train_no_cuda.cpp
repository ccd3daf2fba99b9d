// The GPU trainer and predictor of a CPU-only build: they say so.
#include "lvq/trainer.hpp"
#include "simkit/error.hpp"

namespace simkit::lvq::detail {

std::unique_ptr<Trainer> gpu_trainer(const Dataset&, const Model&, const TrainOptions&) {
  throw Failure("this simkit was built without CUDA");
}

bool gpu_predicts(const Model&) { return false; }

std::vector<std::uint32_t> predict_gpu(const Model&, const Dataset&, RowRange, std::size_t, int) {
  throw Failure("this simkit was built without CUDA");
}

}  // namespace simkit::lvq::detail
