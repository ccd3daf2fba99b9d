#include "core/cuda/staged_copy.hpp"

#include <algorithm>
#include <cstring>

#include <oneapi/tbb/parallel_for.h>

namespace simkit::cuda {

namespace {
// Each core copies slices of this size into the pinned buffer.
constexpr std::size_t kSliceBytes = std::size_t{1} << 19;
}  // namespace

StagedCopy::StagedCopy(std::size_t piece_bytes, int pieces)
    : piece_bytes_(std::max<std::size_t>(piece_bytes, kSliceBytes)), pieces_(static_cast<std::size_t>(std::max(pieces, 2))) {}

StagedCopy::~StagedCopy() {
  for (Piece& piece : pieces_)
    if (piece.done) cudaEventSynchronize(piece.done->get());
}

void StagedCopy::copy(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  auto* to = static_cast<std::byte*>(device);
  const auto* from = static_cast<const std::byte*>(host);
  for (std::size_t at = 0; at < bytes; at += piece_bytes_) {
    const std::size_t n = std::min(piece_bytes_, bytes - at);
    Piece& piece = pieces_[next_];
    next_ = (next_ + 1) % pieces_.size();
    if (piece.done) SIMKIT_CUDA_CHECK(cudaEventSynchronize(piece.done->get()));
    if (piece.buffer.size() == 0) piece.buffer = PinnedBuffer<std::byte>(piece_bytes_);
    std::byte* staging = piece.buffer.get();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kSliceBytes), [&](const auto& range) {
      std::memcpy(staging + range.begin(), from + at + range.begin(), range.size());
    });
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(to + at, staging, n, cudaMemcpyHostToDevice, stream));
    if (!piece.done) piece.done.emplace();
    piece.done->record(stream);
  }
}

}  // namespace simkit::cuda
