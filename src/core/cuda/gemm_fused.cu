// The fused scores of include/simkit/gemm.hpp (top k, threshold) and the 3xTF32 product
// around the tensor-core kernel (gemm_wgmma.cu), the three-pass cuBLAS path the fused
// top k replaces, and the benchmark of one against the other.
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/gemm_epilogue.cuh"
#include "core/cuda/memory.hpp"
#include "core/cuda/select.hpp"
#include "core/text.hpp"
#ifdef SIMKIT_HAVE_WGMMA
#include "core/cuda/gemm_wgmma.hpp"
#endif
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"

namespace simkit::gemm {

namespace {

// What every entry point on the tensor-core kernel needs.
void require_tensor_layout(std::size_t k, const float* a, const float* b, std::size_t rotate_a) {
  if (tensor_tiles().empty())
    throw UsageError("the TF32 tensor-core product needs a compute-capability 9.0 GPU (Hopper) and an sm_90a build");
  if (k % 4 != 0 || rotate_a % 4 != 0 || (k > 0 && rotate_a >= k) || reinterpret_cast<std::uintptr_t>(a) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(b) % 16 != 0)
    throw UsageError(cat("the TF32 tensor-core product needs k and the rotation multiples of 4 (k = ", k,
                         ", rotation ", rotate_a, ", below k) and 16-byte aligned operands"));
}

// Every score but the dot product reads one factor a row of A and of B.
void require_factors(const ScoreSpec& spec) {
  if (spec.kind != Score::Dot && (spec.row_a == nullptr || spec.row_b == nullptr))
    throw UsageError(cat("the ", score_name(spec.kind), " score needs its per-row factors of A and B"));
}

void require_top(int top) {
  if (top < 1 || top > kMaxFusedTop) throw UsageError(cat("top ", top, ": the fused top k keeps 1 ..", kMaxFusedTop));
}

void require_indexable(std::size_t m, std::size_t n) {
  if (m >= 0xffffffffu || n >= 0xffffffffu)
    throw UsageError(cat("a product of ", m, " x ", n, " has rows or columns past 32-bit indices"));
}

// x rounded to TF32 (10 fraction bits), to nearest, ties away from zero (cvt.rna.tf32).
__device__ __forceinline__ float round_tf32(float x) {
  if (!isfinite(x)) return x;
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & ~0x1FFFu);
}

// Rows of x (k floats) as rows of 3k: [hi | hi | lo] (lo_last) or [hi | lo | hi].
__global__ void split_kernel(const float* x, std::size_t rows, std::size_t k, float* out, bool lo_last) {
  const std::size_t total = rows * k;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t r = e / k, c = e % k;
    const float hi = round_tf32(x[e]), lo = round_tf32(x[e] - hi);
    float* row = out + r * 3 * k;
    row[c] = hi;
    row[k + c] = lo_last ? hi : lo;
    row[2 * k + c] = lo_last ? lo : hi;
  }
}

// A tile of products (rows x cols, row stride ld; entry (i, j) is A row row0 + i, B row
// col0 + j) turned into ranking keys, in place.
template <typename Score>
__global__ void key_kernel(float* tile, std::size_t ld, std::size_t rows, std::size_t cols, std::size_t row0,
                           std::size_t col0, Score score) {
  const std::size_t total = rows * cols;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t i = e / cols, j = e % cols;
    float& v = tile[i * ld + j];
    v = detail::key_of<Score>(detail::score_at(score, row0 + i, col0 + j, v));
  }
}

// The first `top` slots of each row of keys (width a row) as scores: minus the key for
// distances.
__global__ void finish_kernel(const float* keys, const std::uint32_t* indices, std::size_t width, std::size_t rows,
                              int top, bool negate, float* scores, std::uint32_t* columns) {
  const std::size_t total = rows * top;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t r = e / top, s = e % top;
    scores[e] = negate ? -keys[r * width + s] : keys[r * width + s];
    columns[e] = indices[r * width + s];
  }
}

// One cuBLAS handle a thread and device, made on first use and destroyed when the thread
// ends (thread_local objects go before the CUDA runtime's teardown at exit).
cublasHandle_t cached_cublas() {
  int device = 0;
  SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
  thread_local std::map<int, cuda::CublasHandle> handles;
  auto it = handles.find(device);
  if (it == handles.end()) it = handles.emplace(device, cuda::make_cublas()).first;
  return it->second.get();
}

unsigned blocks_for(std::size_t total) {
  return static_cast<unsigned>(std::clamp<std::size_t>((total + 255) / 256, 1, 8 * std::size_t(cuda::sm_count())));
}

// The state of `rows` rows, filled empty.
struct State {
  cuda::DeviceBuffer<float> scores;
  cuda::DeviceBuffer<std::uint32_t> indices;
  cuda::TopKState view;
  State(std::size_t rows, int top)
      : scores(rows * cuda::state_width(top)), indices(rows * cuda::state_width(top)) {
    view = {scores.get(), indices.get(), rows, cuda::state_width(top)};
    cuda::fill_empty(view, nullptr);
  }
};

void finish(const float* keys, const std::uint32_t* indices, std::size_t width, std::size_t rows, int top,
            Score kind, float* scores, std::uint32_t* columns) {
  finish_kernel<<<blocks_for(rows * top), 256>>>(keys, indices, width, rows, top, kind == Score::SquaredDistance,
                                                 scores, columns);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void multiply_tf32x3(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  require_tensor_layout(k, a, b, 0);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum (and no scratch to hand the kernel)
    SIMKIT_CUDA_CHECK(cudaMemset(c, 0, m * n * sizeof(float)));
    return;
  }
  cuda::DeviceBuffer<float> a3(m * 3 * k), b3(n * 3 * k);
  split_kernel<<<blocks_for(m * k), 256>>>(a, m, k, a3.get(), true);
  split_kernel<<<blocks_for(n * k), 256>>>(b, n, k, b3.get(), false);
  SIMKIT_CUDA_CHECK_LAUNCH();
#ifdef SIMKIT_HAVE_WGMMA
  detail::multiply_tf32_promoted(m, n, 3 * k, a3.get(), b3.get(), c, nullptr);
#else
  (void)c;
#endif
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // before the scratch goes
}

void top_k_tf32(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                const float* b, int top, float* scores, std::uint32_t* columns) {
  require_tensor_layout(k, a, b, spec.rotate_a);
  require_factors(spec);
  require_top(top);
  require_indexable(m, n);
  if (m == 0) return;
#ifdef SIMKIT_HAVE_WGMMA
  const unsigned groups = detail::top_k_groups(m, n, k, top);
  const std::size_t per_row = std::size_t(groups) * top;
  cuda::DeviceBuffer<float> keys(m * per_row);
  cuda::DeviceBuffer<std::uint32_t> indices(m * per_row);
  detail::top_k_lists_tf32(spec, m, n, k, a, b, top, groups, keys.get(), indices.get(), nullptr);
  if (per_row == std::size_t(top)) {  // one list a row: already the answer
    finish(keys.get(), indices.get(), per_row, m, top, spec.kind, scores, columns);
  } else {
    State state(m, top);
    cuda::select_lists(keys.get(), indices.get(), nullptr, per_row, m, 0, state.view, nullptr);
    finish(state.view.scores, state.view.indices, state.view.width, m, top, spec.kind, scores, columns);
  }
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
#else
  (void)scores, (void)columns;
#endif
}

void top_k_cublas(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                  const float* b, int top, float* scores, std::uint32_t* columns, std::size_t tile_bytes) {
  if (top < 1 || static_cast<std::size_t>(top) > cuda::kMaxGpuK)
    throw UsageError(cat("top ", top, ": expected 1 .. ", cuda::kMaxGpuK));
  if (spec.rotate_a > 0 && spec.rotate_a >= k) throw UsageError(cat("rotation ", spec.rotate_a, " is not below k = ", k));
  require_factors(spec);
  require_indexable(m, n);
  if (m == 0) return;
  const std::size_t floats = std::max<std::size_t>(tile_bytes / sizeof(float), 1);
  const std::size_t rows_per = std::min<std::size_t>(m, 4096);
  const std::size_t cols_per = std::clamp<std::size_t>(floats / rows_per, 1, std::max<std::size_t>(n, 1));
  if (rows_per > 0x7fffffff || cols_per > 0x7fffffff || k > 0x7fffffff)
    throw UsageError(cat("a product of k = ", k, " is too deep for cuBLAS"));
  cuda::DeviceBuffer<float> tile(rows_per * cols_per);
  State state(m, top);
  cuda::SelectScratch scratch;
  cublasHandle_t h = cached_cublas();
  SIMKIT_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
  const std::size_t r = spec.rotate_a;
  const int ld = static_cast<int>(k);
  for (std::size_t r0 = 0; r0 < m; r0 += rows_per) {
    const std::size_t rows = std::min(rows_per, m - r0);
    for (std::size_t c0 = 0; c0 < n; c0 += cols_per) {
      const std::size_t cols = std::min(cols_per, n - c0);
      // Row-major tile = A' B^T is column-major tile^T = B^T' A'. With a rotation r,
      // A' = [A_{r..k} | A_{0..r}]: A_{r..k} . B_{0..k-r}^T + A_{0..r} . B_{k-r..k}^T.
      const float one = 1, zero = 0;
      const auto product = [&](const float* a0, const float* b0, std::size_t depth, const float* beta) {
        SIMKIT_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(cols), static_cast<int>(rows),
                                        static_cast<int>(depth), &one, b0 + c0 * k, ld, a0 + r0 * k, ld, beta,
                                        tile.get(), static_cast<int>(cols_per)));
      };
      if (k == 0) {
        SIMKIT_CUDA_CHECK(cudaMemset(tile.get(), 0, rows_per * cols_per * sizeof(float)));
      } else {
        product(a + r, b, k - r, &zero);
        if (r > 0) product(a, b + (k - r), r, &one);
      }
      detail::with_score(spec, [&](auto score) {
        key_kernel<<<blocks_for(rows * cols), 256>>>(tile.get(), cols_per, rows, cols, r0, c0, score);
      });
      SIMKIT_CUDA_CHECK_LAUNCH();
      cuda::select_rows(tile.get(), cols_per, rows, cols, r0, c0, {}, state.view, scratch, nullptr);
    }
  }
  finish(state.view.scores, state.view.indices, state.view.width, m, top, spec.kind, scores, columns);
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

std::size_t threshold_tf32(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                           const float* b, float threshold, ScoredPair* hits, std::size_t capacity) {
  require_tensor_layout(k, a, b, spec.rotate_a);
  require_factors(spec);
  require_indexable(m, n);
  if (m == 0 || n == 0) return 0;
  cuda::DeviceBuffer<unsigned long long> count(1);
  SIMKIT_CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned long long)));
#ifdef SIMKIT_HAVE_WGMMA
  detail::threshold_tf32_impl(spec, m, n, k, a, b, threshold, hits, count.get(), capacity, nullptr);
#else
  (void)threshold, (void)hits, (void)capacity;
#endif
  unsigned long long total = 0;
  SIMKIT_CUDA_CHECK(cudaMemcpy(&total, count.get(), sizeof total, cudaMemcpyDeviceToHost));
  return static_cast<std::size_t>(total);
}

}  // namespace simkit::gemm
