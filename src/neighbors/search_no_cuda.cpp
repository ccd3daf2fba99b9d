// The GPU search of a CPU-only build: it says so.
#include "neighbors/search_backends.hpp"
#include "simkit/error.hpp"

namespace simkit::neighbors::detail {

struct GpuIndex {};
void GpuIndexDeleter::operator()(GpuIndex* index) const noexcept { delete index; }
GpuIndexPtr make_gpu_index(const Model&, const SearchOptions&) {
  throw Failure("this simkit was built without CUDA");
}
TopKLists search_gpu(GpuIndex&, const float*, std::size_t, std::size_t, double*, std::optional<RowRange>) {
  throw Failure("this simkit was built without CUDA");
}
std::size_t gpu_index_bytes(const Model&, Precision) { return 0; }
double gpu_setup_ms(const GpuIndex&) { return 0; }

}  // namespace simkit::neighbors::detail
