// The fused scores of include/simkit/gemm.hpp (top k, threshold, the self-join), the fp16
// and 3xTF32 products around the tensor-core kernel (gemm_wgmma.cu), the three-pass
// cuBLAS paths the fused top k and self-join replace, and the benchmark of one against
// the other.
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "engine/cuda/cublas_product.hpp"
#include "engine/cuda/gemm_epilogue.cuh"
#include "core/cuda/memory.hpp"
#include "engine/cuda/select.hpp"
#include "core/text.hpp"
#include "simkit/pairwise.hpp"
#ifdef SIMKIT_HAVE_WGMMA
#include "engine/cuda/gemm_wgmma.hpp"
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

__global__ void to_fp16_kernel(const float* x, std::size_t count, float scale, __half* out) {
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < count;
       e += std::size_t{gridDim.x} * blockDim.x)
    out[e] = __float2half_rn(x[e] * scale);
}

std::size_t element_bytes(Operands operands) { return operands == Operands::fp16 ? 2 : 4; }

// The operands' element type and cuBLAS's arithmetic for them (fp32 sums either way).
cudaDataType data_type(Operands operands) { return operands == Operands::fp16 ? CUDA_R_16F : CUDA_R_32F; }
cublasComputeType_t compute_type(Operands operands) {
  return operands == Operands::fp16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
}

// Keys (scores, or minus distances) of a tile of products, in place, on `stream`.
void tile_keys(const ScoreSpec& spec, float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
               std::size_t row0, std::size_t col0, cudaStream_t stream) {
  detail::with_score(spec, [&](auto score) {
    key_kernel<<<blocks_for(rows * cols), 256, 0, stream>>>(tile, ld, rows, cols, row0, col0, score);
  });
  SIMKIT_CUDA_CHECK_LAUNCH();
}

// Self-joins read rows rotated by 0 or by half of k: then rot(x_i) . x_j = rot(x_j) . x_i,
// and one product serves both orders of a pair (any other rotation would make the scores
// asymmetric).
void require_symmetric_rotation(std::size_t k, std::size_t rotate) {
  if (rotate != 0 && 2 * rotate != k)
    throw UsageError(cat("a self-join reads rows rotated by 0 or by half of k (rotation ", rotate, ", k = ", k, ")"));
}

// What the fused self-join needs of its operands: rows of whole 16-byte pieces, 16-byte
// aligned, and a rotation in whole 128-byte slices.
void require_self_layout(Operands operands, std::size_t k, const void* rows, std::size_t rotate) {
  const std::size_t bytes = element_bytes(operands), piece = 16 / bytes, slice = 128 / bytes;
  if (k % piece != 0 || k > 0x7fffffff || reinterpret_cast<std::uintptr_t>(rows) % 16 != 0)
    throw UsageError(cat("the ", operands_name(operands), " self-join needs k a multiple of ", piece,
                         " below 2^31 (k = ", k, ") and 16-byte aligned rows"));
  require_symmetric_rotation(k, rotate);
  if (rotate % slice != 0)
    throw UsageError(cat("the ", operands_name(operands), " self-join reads rows rotated in whole slices of ", slice,
                         " elements (rotation ", rotate, ")"));
}

// The self-join's scorer for the pairwise engine (the baseline path): rows resident on the
// device, each block pair multiplied by cuBLAS and turned into keys.
class CublasSelfScorer final : public gpu::BlockScorer {
 public:
  CublasSelfScorer(const ScoreSpec& spec, Operands operands, std::size_t k, const void* rows)
      : spec_(spec), operands_(operands), k_(k), rows_(static_cast<const char*>(rows)) {}
  std::size_t bytes_per_row_a() const override { return sizeof(float); }
  std::size_t bytes_per_row_b() const override { return k_ * element_bytes(operands_); }
  bool b_resident() const override { return true; }
  std::size_t preferred_tile_bytes() const override { return std::size_t{64} << 20; }  // long rows: DISCO's tiles
  void load_a(RowRange, void*, gpu::Stream) override {}
  void load_b(RowRange, void*, gpu::Stream) override {}
  void score(const void*, RowRange a, const void*, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    cublasHandle_t h = cached_cublas();
    SIMKIT_CUBLAS_CHECK(cublasSetStream(h, stream));
    const std::size_t row_bytes = k_ * element_bytes(operands_);
    cuda::rotated_product(h, data_type(operands_), compute_type(operands_), rows_ + a.begin * row_bytes, a.size(),
                          rows_ + b.begin * row_bytes, b.size(), k_, spec_.rotate_a, tile, ld, stream);
    tile_keys(spec_, tile, ld, a.size(), b.size(), a.begin, b.begin, stream);
    SIMKIT_CUBLAS_CHECK(cublasSetStream(h, nullptr));
  }

 private:
  ScoreSpec spec_;
  Operands operands_;
  std::size_t k_;
  const char* rows_;
};

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

void to_fp16(const float* x, std::size_t count, float scale, std::uint16_t* out) {
  if (count == 0) return;
  to_fp16_kernel<<<blocks_for(count), 256>>>(x, count, scale, reinterpret_cast<__half*>(out));
  SIMKIT_CUDA_CHECK_LAUNCH();
}

void multiply_fp16(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const std::uint16_t* a,
                   const std::uint16_t* b, float* c) {
  if (tensor_tiles().empty())
    throw UsageError("the fp16 tensor-core product needs a compute-capability 9.0 GPU (Hopper) and an sm_90a build");
  if (!tile.fp16) throw UsageError("tile " + tile.name() + " takes TF32 operands (multiply_tf32)");
  if (k % 8 != 0 || reinterpret_cast<std::uintptr_t>(a) % 16 != 0 || reinterpret_cast<std::uintptr_t>(b) % 16 != 0)
    throw UsageError(cat("the fp16 tensor-core product needs k a multiple of 8 (k = ", k, ") and 16-byte aligned operands"));
  if (m == 0 || n == 0) return;
  if (k == 0) {
    SIMKIT_CUDA_CHECK(cudaMemset(c, 0, m * n * sizeof(float)));
    return;
  }
#ifdef SIMKIT_HAVE_WGMMA
  detail::multiply_fp16_impl(tile, m, n, k, a, b, c, nullptr);
#else
  (void)tile;
#endif
}

void self_top_k(const ScoreSpec& spec, Operands operands, std::size_t n, std::size_t k, const void* rows, int top,
                float* scores, std::uint32_t* columns, std::size_t budget) {
  if (tensor_tiles().empty())
    throw UsageError("the fused self-join needs a compute-capability 9.0 GPU (Hopper) and an sm_90a build");
  require_self_layout(operands, k, rows, spec.rotate_a);
  ScoreSpec self = spec;
  self.row_b = self.row_a;
  require_factors(self);
  if (top < 1 || top > kMaxSelfTop) throw UsageError(cat("top ", top, ": the fused self-join keeps 1 ..", kMaxSelfTop));
  require_indexable(n, n);
  if (n == 0) return;
#ifdef SIMKIT_HAVE_WGMMA
  constexpr std::size_t tm = detail::kSelfTileM, tn = detail::kSelfTileN;
  const std::size_t tiles_m = (n + tm - 1) / tm, tiles_n = (n + tn - 1) / tn;
  // A band of b row tiles holds at most b tm rows' lists of every column tile and every
  // column's list of its b row tiles.
  const std::size_t per_tile = (tm * tiles_n + n) * std::size_t(top) * 8;
  if (budget == 0) {
    std::size_t free = 0, total = 0;
    SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    budget = free / 4;
  }
  std::size_t band = std::clamp<std::size_t>(budget / per_tile, 1, tiles_m);
  if (band >= 8 && band < tiles_m) band = band / 8 * 8;  // whole raster groups
  cuda::DeviceBuffer<float> row_keys(band * tm * tiles_n * top), col_keys(n * band * top);
  cuda::DeviceBuffer<std::uint32_t> row_columns(row_keys.size()), col_rows(col_keys.size());
  State state(n, top);
  // SIMKIT_ENGINE_STATS: the kernels' and the merges' device time, apart.
  const bool stats = std::getenv("SIMKIT_ENGINE_STATS") != nullptr;
  cuda::Event marks[3] = {cuda::Event(cudaEventDefault), cuda::Event(cudaEventDefault), cuda::Event(cudaEventDefault)};
  double kernel_ms = 0, merge_ms = 0;
  for (std::size_t lo = 0; lo < tiles_m; lo += band) {
    detail::SelfBand b;
    b.tile_lo = lo;
    b.tile_hi = std::min(lo + band, tiles_m);
    b.col_tile_lo = lo * tm / tn;
    b.row_keys = row_keys.get();
    b.row_columns = row_columns.get();
    b.row_per = (tiles_n - b.col_tile_lo) * top;
    b.col_keys = col_keys.get();
    b.col_rows = col_rows.get();
    b.col_per = (b.tile_hi - b.tile_lo) * top;
    if (stats) marks[0].record(nullptr);
    detail::self_lists(self, operands == Operands::fp16, n, k, rows, top, b, nullptr);
    if (stats) marks[1].record(nullptr);
    const std::size_t row0 = lo * tm, col0 = b.col_tile_lo * tn;
    cuda::select_lists(b.row_keys, b.row_columns, nullptr, b.row_per, std::min(b.tile_hi * tm, n) - row0, row0,
                       state.view, nullptr);
    cuda::select_lists(b.col_keys, b.col_rows, nullptr, b.col_per, n - col0, col0, state.view, nullptr);
    if (stats) {
      marks[2].record(nullptr);
      SIMKIT_CUDA_CHECK(cudaEventSynchronize(marks[2].get()));
      kernel_ms += cuda::elapsed_ms(marks[0], marks[1]);
      merge_ms += cuda::elapsed_ms(marks[1], marks[2]);
    }
  }
  if (stats)
    std::fprintf(stderr, "self-join: %zu rows, %zu bands of %zu row tiles: kernels %.2f ms, list merges %.2f ms\n", n,
                 (tiles_m + band - 1) / band, band, kernel_ms, merge_ms);
  finish(state.view.scores, state.view.indices, state.view.width, n, top, spec.kind, scores, columns);
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
#else
  (void)scores, (void)columns, (void)budget;
#endif
}

void self_top_k_cublas(const ScoreSpec& spec, Operands operands, std::size_t n, std::size_t k, const void* rows,
                       int top, float* scores, std::uint32_t* columns) {
  if (top < 1 || static_cast<std::size_t>(top) > cuda::kMaxGpuK)
    throw UsageError(cat("top ", top, ": expected 1 .. ", cuda::kMaxGpuK));
  require_symmetric_rotation(k, spec.rotate_a);
  ScoreSpec self = spec;
  self.row_b = self.row_a;
  require_factors(self);
  require_indexable(n, n);
  if (n == 0) return;
  int device = 0;
  SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
  CublasSelfScorer scorer(self, operands, k, rows);
  PairwiseJob job;
  job.rows_a = job.rows_b = n;
  job.k = static_cast<std::size_t>(top);
  job.symmetric = true;
  job.exclude_self = true;
  const PairwiseResult result = gpu::pairwise(job, scorer, device);
  // The engine ranks keys; distances come back as minus themselves.
  std::vector<float> keys = result.topk.scores;
  if (spec.kind == Score::SquaredDistance)
    for (float& key : keys) key = -key;
  SIMKIT_CUDA_CHECK(cudaMemcpy(scores, keys.data(), keys.size() * sizeof(float), cudaMemcpyHostToDevice));
  SIMKIT_CUDA_CHECK(cudaMemcpy(columns, result.topk.indices.data(), keys.size() * sizeof(std::uint32_t),
                               cudaMemcpyHostToDevice));
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
  for (std::size_t r0 = 0; r0 < m; r0 += rows_per) {
    const std::size_t rows = std::min(rows_per, m - r0);
    for (std::size_t c0 = 0; c0 < n; c0 += cols_per) {
      const std::size_t cols = std::min(cols_per, n - c0);
      cuda::rotated_product(h, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, a + r0 * k, rows, b + c0 * k, cols, k,
                            spec.rotate_a, tile.get(), cols_per, nullptr);
      tile_keys(spec, tile.get(), cols_per, rows, cols, r0, c0, nullptr);
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
