// The GPU backend of a CPU-only build: it says so.
#include "cca/backend.hpp"
#include "simkit/error.hpp"

namespace simkit::cca::detail {

std::unique_ptr<Backend> gpu_backend(std::size_t, int) { throw Failure("this simkit was built without CUDA"); }

}  // namespace simkit::cca::detail
