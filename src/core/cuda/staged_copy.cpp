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

void StagedCopy::stage(void* device, std::size_t bytes, cudaStream_t stream,
                       const std::function<void(std::byte*, std::size_t, std::size_t)>& fill) {
  auto* to = static_cast<std::byte*>(device);
  for (std::size_t at = 0; at < bytes; at += piece_bytes_) {
    const std::size_t n = std::min(piece_bytes_, bytes - at);
    Piece& piece = pieces_[next_];
    next_ = (next_ + 1) % pieces_.size();
    if (piece.done) SIMKIT_CUDA_CHECK(cudaEventSynchronize(piece.done->get()));
    if (piece.buffer.size() == 0) piece.buffer = PinnedBuffer<std::byte>(piece_bytes_);
    fill(piece.buffer.get(), at, n);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(to + at, piece.buffer.get(), n, cudaMemcpyHostToDevice, stream));
    if (!piece.done) piece.done.emplace();
    piece.done->record(stream);
  }
}

void StagedCopy::copy(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  const auto* from = static_cast<const std::byte*>(host);
  stage(device, bytes, stream, [&](std::byte* staging, std::size_t at, std::size_t n) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kSliceBytes), [&](const auto& range) {
      std::memcpy(staging + range.begin(), from + at + range.begin(), range.size());
    });
  });
}

void StagedCopy::copy_gathered(void* device, const std::vector<std::span<const std::byte>>& pieces, cudaStream_t stream) {
  std::vector<std::size_t> starts(pieces.size() + 1, 0);  // each piece's place end to end
  for (std::size_t i = 0; i < pieces.size(); ++i) starts[i + 1] = starts[i] + pieces[i].size();
  stage(device, starts.back(), stream, [&](std::byte* staging, std::size_t at, std::size_t n) {
    // The pieces overlapping [at, at + n), each copied by one core.
    const auto first = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
    const auto last = static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.end(), at + n) - starts.begin());
    tbb::parallel_for(first, last, [&](std::size_t i) {
      const std::size_t from = std::max(starts[i], at), to = std::min(starts[i + 1], at + n);
      if (from < to) std::memcpy(staging + (from - at), pieces[i].data() + (from - starts[i]), to - from);
    });
  });
}

}  // namespace simkit::cuda
