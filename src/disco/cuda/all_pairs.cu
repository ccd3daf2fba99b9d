// Dense Lin similarity on the GPU: a BlockScorer for the pairwise engine. The [M|A] rows
// of every word stay on the device when they fit the budget's half (else the engine
// loads blocks of them); a block of [A|M] rows is built on the host and copied; cuBLAS
// multiplies them (fp32, or TF32 tensor cores) and a small kernel divides each score by
// s_i + s_j.
#include <cstring>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "disco/gpu.hpp"
#include "simkit/device.hpp"

namespace simkit::disco::detail {

namespace {

__global__ void divide_by_sums(float* tile, std::size_t ld, std::size_t rows, std::size_t cols, const float* sums_a,
                               const float* sums_b) {
  for (std::size_t i = blockIdx.x; i < rows; i += gridDim.x)
    for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const float d = sums_a[i] + sums_b[j];
      float& s = tile[i * ld + j];
      s = d > 0 ? s / d : 0.0f;
    }
}

class LinScorer final : public gpu::BlockScorer {
 public:
  LinScorer(const Model& model, const DenseRows& rows, bool tf32, std::size_t budget)
      : model_(model), rows_(rows), width_(2 * rows.width), tf32_(tf32) {
    SIMKIT_CUBLAS_CHECK(cublasCreate(&cublas_));
    sums_ = cuda::DeviceBuffer<float>(model.size());
    SIMKIT_CUDA_CHECK(cudaMemcpy(sums_.get(), rows.sums.data(), model.size() * sizeof(float), cudaMemcpyHostToDevice));
    const std::size_t all_b = model.size() * width_ * sizeof(float);
    if (all_b <= budget / 2) {  // every [M|A] row resident, built in pieces
      resident_ = cuda::DeviceBuffer<float>(model.size() * width_);
      constexpr std::size_t kPiece = 4096;
      std::vector<float> host(kPiece * width_);
      for (std::size_t first = 0; first < model.size(); first += kPiece) {
        const std::size_t n = std::min(kPiece, model.size() - first);
        rows.write(model, first, n, false, host.data());
        SIMKIT_CUDA_CHECK(cudaMemcpy(resident_.get() + first * width_, host.data(), n * width_ * sizeof(float),
                                     cudaMemcpyHostToDevice));
      }
    }
  }
  ~LinScorer() override { cublasDestroy(cublas_); }

  std::size_t bytes_per_row_a() const override { return width_ * sizeof(float); }
  std::size_t bytes_per_row_b() const override { return width_ * sizeof(float); }
  bool b_resident() const override { return resident_.size() > 0; }
  void load_a(RowRange rows, void* slot, gpu::Stream stream) override { load(rows, true, slot, stream); }
  void load_b(RowRange rows, void* slot, gpu::Stream stream) override { load(rows, false, slot, stream); }
  void score(const void* a_slot, RowRange a, const void* b_slot, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    const float* rows_b = b_resident() ? resident_.get() + b.begin * width_ : static_cast<const float*>(b_slot);
    // tile (row-major a x b, stride ld) seen column-major is (b x a) = B(b x w) . A^T.
    SIMKIT_CUBLAS_CHECK(cublasSetStream(cublas_, stream));
    const float one = 1.0f, zero = 0.0f;
    SIMKIT_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(b.size()),
                                     static_cast<int>(a.size()), static_cast<int>(width_), &one, rows_b, CUDA_R_32F,
                                     static_cast<int>(width_), a_slot, CUDA_R_32F, static_cast<int>(width_), &zero,
                                     tile, CUDA_R_32F, static_cast<int>(ld),
                                     tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(a.size(), 65535));
    divide_by_sums<<<blocks, 256, 0, stream>>>(tile, ld, a.size(), b.size(), sums_.get() + a.begin,
                                               sums_.get() + b.begin);
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

 private:
  // Built on the host and copied before returning (the host buffer is reused at once).
  void load(RowRange rows, bool left, void* slot, gpu::Stream stream) {
    host_.resize(rows.size() * width_);
    rows_.write(model_, rows.begin, rows.size(), left, host_.data());
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(slot, host_.data(), host_.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  const Model& model_;
  const DenseRows& rows_;
  std::size_t width_;
  bool tf32_;
  cublasHandle_t cublas_ = nullptr;
  cuda::DeviceBuffer<float> sums_, resident_;
  std::vector<float> host_;
};

}  // namespace

TopKLists all_pairs_gpu(const Model& model, const DenseRows& rows, const PairwiseJob& job,
                        const AllPairsOptions& options, double* device_ms) {
  const cuda::DeviceGuard guard(options.device);
  const std::size_t budget =
      options.memory_budget != 0 ? options.memory_budget : gpu_memory(options.device).free / 10 * 8;
  LinScorer scorer(model, rows, options.tf32, budget);
  gpu::Engine engine(options.device);
  PairwiseJob j = job;
  j.memory_budget = budget / 2;
  const PairwiseResult result = engine.run(j, scorer);
  if (device_ms != nullptr) *device_ms = engine.last_ms();
  return result.topk;
}

}  // namespace simkit::disco::detail
