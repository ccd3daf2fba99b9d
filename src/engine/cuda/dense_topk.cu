// dense_top_k on a GPU: rows staged as fp32 (with each row's factor after the block's
// rows), cuBLAS SGEMM products of row blocks (fp32, no tensor cores: the CPU's answers to
// rounding), the metric's score made in place, the engine's selection. B stays on the
// device when it fits a quarter of the free memory.
#include <cublas_v2.h>

#include <algorithm>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/memory.hpp"
#include "core/text.hpp"
#include "engine/dense_topk.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"

namespace simkit::detail {

namespace {

// tile[i][j] = the metric's score from the product p = tile[i][j] and the rows' factors.
__global__ void finish_scores(float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                              const float* __restrict__ fa, const float* __restrict__ fb, bool cosine) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t i = blockIdx.y;
  if (j >= cols || i >= rows) return;
  float& s = tile[i * ld + j];
  s = cosine ? s * (fa[i] * fb[j]) : -fmaxf(0.0f, fa[i] + fb[j] - 2 * s);
}

class DenseScorer final : public gpu::BlockScorer {
 public:
  DenseScorer(const float* a, const float* b, std::size_t rows_b, std::size_t dim, Metric metric,
              std::vector<float> fa, std::vector<float> fb, int device)
      : a_(a), b_(b), dim_(dim), metric_(metric), fa_(std::move(fa)), fb_(std::move(fb)) {
    cuda::DeviceGuard guard(device);
    cublas_ = cuda::make_cublas();
    const std::size_t bytes = rows_b * bytes_per_row_b();
    if (bytes <= gpu_memory(device).free / 4) {
      resident_b_ = cuda::DeviceBuffer<float>(rows_b * (dim + 1));
      SIMKIT_CUDA_CHECK(cudaMemcpy(resident_b_.get(), b, rows_b * dim * sizeof(float), cudaMemcpyHostToDevice));
      if (!fb_.empty())
        SIMKIT_CUDA_CHECK(cudaMemcpy(resident_b_.get() + rows_b * dim, fb_.data(), rows_b * sizeof(float),
                                     cudaMemcpyHostToDevice));
      rows_b_ = rows_b;
    }
  }

  std::size_t bytes_per_row_a() const override { return (dim_ + 1) * sizeof(float); }
  std::size_t bytes_per_row_b() const override { return (dim_ + 1) * sizeof(float); }
  bool b_resident() const override { return resident_b_.size() > 0; }

  void load_a(RowRange rows, void* slot, gpu::Stream stream) override { load(a_, fa_, rows, slot, stream); }
  void load_b(RowRange rows, void* slot, gpu::Stream stream) override { load(b_, fb_, rows, slot, stream); }

  void score(const void* a_slot, RowRange a, const void* b_slot, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    const float* rows_a = static_cast<const float*>(a_slot);
    const float* rows_b = b_slot != nullptr ? static_cast<const float*>(b_slot) : resident_b_.get() + b.begin * dim_;
    const float* fb = b_slot != nullptr ? rows_b + b.size() * dim_ : resident_b_.get() + rows_b_ * dim_ + b.begin;
    if (a.size() > 0x7fffffff || b.size() > 0x7fffffff || dim_ > 0x7fffffff || ld > 0x7fffffff)
      throw UsageError(cat("a product of ", a.size(), " x ", b.size(), " x ", dim_, " is too large for cuBLAS"));
    // Row-major tile = A . B^T is column-major tile^T = B . A^T (B's rows as columns).
    const float one = 1, zero = 0;
    const int n = static_cast<int>(dim_);
    SIMKIT_CUBLAS_CHECK(cublasSetStream(cublas_.get(), stream));
    SIMKIT_CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(b.size()),
                                    static_cast<int>(a.size()), n, &one, rows_b, n, rows_a, n, &zero, tile,
                                    static_cast<int>(ld)));
    if (metric_ == Metric::dot) return;
    const dim3 grid(static_cast<unsigned>((b.size() + 255) / 256), static_cast<unsigned>(a.size()));
    finish_scores<<<grid, 256, 0, stream>>>(tile, ld, a.size(), b.size(), rows_a + a.size() * dim_, fb,
                                            metric_ == Metric::cosine);
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

 private:
  // The rows, then their factors, at `slot`.
  void load(const float* host, const std::vector<float>& factors, RowRange rows, void* slot, gpu::Stream stream) {
    auto* out = static_cast<float*>(slot);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(out, host + rows.begin * dim_, rows.size() * dim_ * sizeof(float),
                                      cudaMemcpyHostToDevice, stream));
    if (!factors.empty())
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(out + rows.size() * dim_, factors.data() + rows.begin,
                                        rows.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  }

  const float* a_;
  const float* b_;
  std::size_t dim_;
  Metric metric_;
  std::vector<float> fa_, fb_;
  cuda::CublasHandle cublas_;
  cuda::DeviceBuffer<float> resident_b_;  // rows_b x dim, then the factors
  std::size_t rows_b_ = 0;
};

}  // namespace

PairwiseResult dense_top_k_gpu(const float* a, std::size_t rows_a, const float* b, std::size_t rows_b,
                               std::size_t dim, const DenseTopKOptions& options, const PairwiseJob& job) {
  const cuda::DeviceGuard guard(options.device);  // (the scorer's buffers let go through it too)
  DenseScorer scorer(a, b, rows_b, dim, options.metric, row_factors(a, rows_a, dim, options.metric),
                     row_factors(b, rows_b, dim, options.metric), options.device);
  return gpu::pairwise(job, scorer, options.device);
}

}  // namespace simkit::detail
