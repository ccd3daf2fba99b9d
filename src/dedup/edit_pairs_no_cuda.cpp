// The GPU edit distances of a CPU-only build: they say so.
#include "dedup/edit_distance.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

std::vector<EditPair> edit_pairs_gpu(const StringSet&, const std::vector<PairBlock>&, PairRule, EditKernel, int, double*,
                                     PairOrder) {
  throw Failure("this simkit was built without CUDA");
}

void keep_edit_pairs_collectors(int, std::size_t) {}

std::vector<std::uint32_t> distances_within_gpu(const char*, const std::vector<std::uint64_t>&,
                                                const std::vector<TextPair>&, int, double*, std::size_t) {
  throw Failure("this simkit was built without CUDA");
}

struct GpuTexts {};
void GpuTextsDeleter::operator()(GpuTexts* texts) const { delete texts; }

GpuTextsPtr send_texts_to_gpu(const std::vector<std::string_view>&, int, std::size_t) {
  throw Failure("this simkit was built without CUDA");
}

std::vector<std::uint32_t> distances_within_gpu(const GpuTexts&, const std::vector<TextPair>&, double*) {
  throw Failure("this simkit was built without CUDA");
}

void prepare_rate_gpu(int) {}

}  // namespace simkit::dedup
