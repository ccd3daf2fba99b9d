#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "engine/cuda/select.hpp"
#include "simkit/topk.hpp"

namespace simkit::gpu {

TopKLists topk(const float* scores, std::size_t rows, std::size_t cols, std::size_t k, int device) {
  cuda::DeviceGuard guard(device);
  TopKLists out(rows, k);
  if (rows == 0 || k == 0) return out;
  const int width = cuda::state_width(k);
  cuda::Stream stream;
  cuda::DeviceBuffer<float> tile(rows * cols);
  cuda::DeviceBuffer<float> state_scores(rows * width);
  cuda::DeviceBuffer<std::uint32_t> state_indices(rows * width);
  const cuda::TopKState state{state_scores.get(), state_indices.get(), rows, width};
  cuda::SelectScratch scratch;
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(tile.get(), scores, rows * cols * sizeof(float),
                                    cudaMemcpyHostToDevice, stream.get()));
  cuda::fill_empty(state, stream.get());
  cuda::select_rows(tile.get(), cols, rows, cols, 0, 0, {}, state, scratch, stream.get());
  std::vector<float> s(rows * width);
  std::vector<std::uint32_t> idx(rows * width);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(s.data(), state_scores.get(), s.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream.get()));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(idx.data(), state_indices.get(), idx.size() * sizeof(std::uint32_t),
                                    cudaMemcpyDeviceToHost, stream.get()));
  stream.sync();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < k; ++j) {
      out.scores[r * k + j] = s[r * width + j];
      out.indices[r * k + j] = idx[r * width + j];
    }
  return out;
}

}  // namespace simkit::gpu
