// The GPU path of a CPU-only build: it says so.
#include "simkit/error.hpp"
#include "simkit/postings.hpp"

namespace simkit::postings {

struct GpuIndex::Impl {};

GpuIndex::GpuIndex(const Index&, const GpuOptions&) { throw Failure("this simkit was built without CUDA"); }
GpuIndex::~GpuIndex() = default;
bool GpuIndex::resident() const noexcept { return false; }
Results GpuIndex::intersect(const Queries&, bool, double*) { throw Failure("this simkit was built without CUDA"); }
void GpuIndex::intersect(const Queries&, Results&, bool, double*) { throw Failure("this simkit was built without CUDA"); }

Results intersect_gpu(const Index&, const Queries&, const GpuOptions&, bool, double*) {
  throw Failure("this simkit was built without CUDA");
}

}  // namespace simkit::postings
