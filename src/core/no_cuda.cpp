// The CUDA entry points of a CPU-only build: they say so instead of computing.
#include "core/gpu_info.hpp"
#include "simkit/error.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/topk.hpp"

namespace simkit {
namespace detail {

bool cuda_compiled() noexcept { return false; }
int cuda_count() noexcept { return 0; }
std::string cuda_name(int) { return "none"; }
GpuMemory cuda_memory(int) { throw Failure("this simkit was built without CUDA"); }

}  // namespace detail

namespace gpu {
struct Engine::Impl {};
Engine::Engine(int) { throw Failure("this simkit was built without CUDA"); }
Engine::~Engine() = default;
PairwiseResult Engine::run(const PairwiseJob&, BlockScorer&) { return {}; }
BlockPlan Engine::plan(const PairwiseJob&, const BlockScorer&) const { return {}; }
double Engine::last_ms() const { return 0; }
int Engine::device() const { return 0; }
PairwiseResult pairwise(const PairwiseJob&, BlockScorer&, int) {
  throw Failure("this simkit was built without CUDA");
}
TopKLists topk(const float*, std::size_t, std::size_t, std::size_t, int) {
  throw Failure("this simkit was built without CUDA");
}
}  // namespace gpu
}  // namespace simkit
