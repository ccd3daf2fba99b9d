// GPU search: the model is uploaded once as unit rows (fp32, fp16 or bf16, rows padded
// to 16 bytes) and stays on the device between batches. A batch of up to four queries
// is scored by a bandwidth-bound kernel that reads each model row once (16-byte loads,
// warp-shuffle sums); larger batches by cuBLAS (fp32, tf32, fp16 or bf16 tensor cores).
// Selection is the pairwise engine's; it scores most of a batch with the fused kernel
// (cuda::dot_candidates), which keeps scores in registers and emits only the few that
// can still enter a top k: on the stored rows at fp16/bf16, on an fp16 copy of them at
// fp32/tf32, whose candidates are then rescored in fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <type_traits>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "engine/cuda/dot_candidates.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/staged_copy.hpp"
#include "core/phase_clock.hpp"
#include "core/text.hpp"
#include "neighbors/search_backends.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::neighbors::detail {

namespace {

constexpr int kGemvMaxQueries = 4;
// fp32/tf32 batches filter on an fp16 copy of the unit rows, then rescore the survivors
// in fp32. A unit query's fp16 score differs from its exact score by at most about
// 2^-10 (inputs rounded to 11 bits, products exact, fp32 sums over <= 768 terms), so a
// slack of 2^-9 lets through every row that the exact score could rank in the top k.
constexpr float kShadowSlack = 1.0f / 512;
constexpr std::size_t kUploadChunkRows = 1 << 15;

template <typename T> struct Element;
template <> struct Element<float> {
  static constexpr cudaDataType_t type = CUDA_R_32F;
  __device__ static float from(float x) { return x; }
  __device__ static void unpack(uint4 raw, float* out) {
    out[0] = __uint_as_float(raw.x);
    out[1] = __uint_as_float(raw.y);
    out[2] = __uint_as_float(raw.z);
    out[3] = __uint_as_float(raw.w);
  }
};
template <> struct Element<__half> {
  static constexpr cudaDataType_t type = CUDA_R_16F;
  __device__ static __half from(float x) { return __float2half_rn(x); }
  __device__ static void unpack(uint4 raw, float* out) {
    const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2 h;
      std::memcpy(&h, &words[i], 4);
      const float2 f = __half22float2(h);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
};
template <> struct Element<__nv_bfloat16> {
  static constexpr cudaDataType_t type = CUDA_R_16BF;
  __device__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
  __device__ static void unpack(uint4 raw, float* out) {
    const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __nv_bfloat162 h;
      std::memcpy(&h, &words[i], 4);
      const float2 f = __bfloat1622float2(h);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
};

// out[r][0..stride) = in[r][0..dim) * scale[r], zero-padded, converted to T.
// scale = 1 / norm for model rows (0 for zero rows), 1 for query directions.
template <typename T>
__global__ void scale_rows(const float* __restrict__ in, std::size_t rows, int dim,
                           const float* __restrict__ norms, T* __restrict__ out, std::size_t stride) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * blockDim.x / 32;
  for (std::size_t r = warp; r < rows; r += warps) {
    float scale = 1.0f;
    if (norms != nullptr) scale = norms[r] > 0 ? 1.0f / norms[r] : 0.0f;
    for (std::size_t d = lane; d < stride; d += 32)
      out[r * stride + d] = Element<T>::from(d < static_cast<std::size_t>(dim) ? in[r * dim + d] * scale : 0.0f);
  }
}

// out[r] = in[r] / |in[r]| rounded to fp16 (zero-padded to out_stride), norms[r] = |in[r]|.
// One warp a row.
__global__ void unit_half_rows(const float* __restrict__ in, std::size_t rows, std::size_t in_stride,
                               __half* __restrict__ out, std::size_t out_stride, float* __restrict__ norms) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* row = in + warp * in_stride;
  float sum = 0;
  for (std::size_t d = lane; d < in_stride; d += 32) sum += row[d] * row[d];
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  const float norm = sqrtf(sum);
  const float inv = norm > 0 ? 1.0f / norm : 0.0f;
  for (std::size_t d = lane; d < out_stride; d += 32)
    out[warp * out_stride + d] = __float2half_rn(d < in_stride ? row[d] * inv : 0.0f);
  if (lane == 0) norms[warp] = norm;
}

// Replaces each candidate's filtering score by its fp32 dot product (query row r of
// `queries` with model row cand_i), the same for every run. One block a query, one
// warp a candidate.
__global__ void rescore_candidates(const float* __restrict__ queries, const float* __restrict__ model,
                                   std::size_t stride, float* cand_s, const std::uint32_t* __restrict__ cand_i,
                                   const std::uint32_t* __restrict__ counts, std::size_t capacity) {
  const std::size_t r = blockIdx.x;
  const int lane = threadIdx.x & 31;
  const std::size_t count = counts[r] < capacity ? counts[r] : capacity;
  const float* q = queries + r * stride;
  for (std::size_t c = threadIdx.x / 32; c < count; c += blockDim.x / 32) {
    const float* row = model + static_cast<std::size_t>(cand_i[r * capacity + c]) * stride;
    float sum = 0;
    for (std::size_t d = lane; d < stride; d += 32) sum += q[d] * row[d];
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) cand_s[r * capacity + c] = sum;
  }
}

// scores[r][c] = <query r, row rows_of[r][c]> (stored unit rows of type T) in one fixed
// order whatever the launch: a warp an entry, lane-strided fp32 sums, a shuffle tree.
template <typename T>
__global__ void exact_scores(const float* __restrict__ queries, std::size_t dim, const T* __restrict__ rows,
                             std::size_t stride, const std::uint32_t* __restrict__ rows_of, std::size_t width,
                             float* __restrict__ scores) {
  const std::size_t r = blockIdx.x;
  const int lane = threadIdx.x & 31;
  const float* q = queries + r * dim;
  for (std::size_t c = threadIdx.x / 32; c < width; c += blockDim.x / 32) {
    const std::uint32_t at = rows_of[r * width + c];
    if (at == kNoIndex) continue;
    const T* row = rows + static_cast<std::size_t>(at) * stride;
    float sum = 0;
    // The query rounded to T as the engine's kernels take it: the products are theirs.
    for (std::size_t d = lane; d < dim; d += 32) sum += static_cast<float>(static_cast<T>(q[d])) * static_cast<float>(row[d]);
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) scores[r * width + c] = sum;
  }
}

// scores[q][row] = <model row, query q> for NQ queries, each model row read once.
// kRows model rows per warp step: their loads are all in flight together.
template <typename T, int NQ, int kGemvRows>
__global__ void __launch_bounds__(256)
    cosine_gemv(const T* __restrict__ model, std::size_t rows, std::size_t stride,
                const T* __restrict__ queries, float* __restrict__ scores, std::size_t ld) {
  extern __shared__ float4 query_smem[];
  float* q = reinterpret_cast<float*>(query_smem);
  constexpr int kPerVec = 16 / sizeof(T);
  const int vecs = static_cast<int>(stride / kPerVec);
  for (std::size_t i = threadIdx.x; i < NQ * stride; i += blockDim.x)
    q[i] = static_cast<float>(queries[i]);
  __syncthreads();

  const int lane = threadIdx.x & 31;
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * blockDim.x / 32;
  for (std::size_t row0 = warp * kGemvRows; row0 < rows; row0 += warps * kGemvRows) {
    float acc[kGemvRows][NQ];
#pragma unroll
    for (int r = 0; r < kGemvRows; ++r)
#pragma unroll
      for (int j = 0; j < NQ; ++j) acc[r][j] = 0.0f;
    for (int v = lane; v < vecs; v += 32) {
      uint4 raw[kGemvRows];
#pragma unroll
      for (int r = 0; r < kGemvRows; ++r) {
        const std::size_t row = row0 + r < rows ? row0 + r : rows - 1;
        raw[r] = __ldg(reinterpret_cast<const uint4*>(model + row * stride) + v);
      }
#pragma unroll
      for (int r = 0; r < kGemvRows; ++r) {
        float x[kPerVec];
        Element<T>::unpack(raw[r], x);
#pragma unroll
        for (int j = 0; j < NQ; ++j) {
          const float4* qv = reinterpret_cast<const float4*>(q + j * stride + v * kPerVec);
#pragma unroll
          for (int e = 0; e < kPerVec; e += 4) {
            const float4 w = qv[e / 4];
            acc[r][j] += x[e] * w.x + x[e + 1] * w.y + x[e + 2] * w.z + x[e + 3] * w.w;
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kGemvRows; ++r)
#pragma unroll
      for (int j = 0; j < NQ; ++j) {
        float sum = acc[r][j];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        if (lane == 0 && row0 + r < rows) scores[j * ld + row0 + r] = sum;
      }
  }
}

template <typename T, int NQ, int R>
void launch_gemv_rows(const T* model, std::size_t rows, std::size_t stride, const T* queries,
                      float* scores, std::size_t ld, cudaStream_t stream) {
  static int grid = [] {
    int device = 0, sms = 0, per_sm = 0;
    SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
    SIMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    SIMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cosine_gemv<T, NQ, R>, 256,
                                                                    16 * 1024));
    return sms * std::max(per_sm, 1);
  }();
  const std::size_t smem = NQ * stride * sizeof(float);
  const std::size_t needed = (rows + R * 8 - 1) / (R * 8);  // blocks of 8 warps
  const int blocks = static_cast<int>(std::min<std::size_t>(grid, std::max<std::size_t>(needed, 1)));
  cosine_gemv<T, NQ, R><<<blocks, 256, smem, stream>>>(model, rows, stride, queries, scores, ld);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

template <typename T, int NQ>
void launch_gemv(const T* model, std::size_t rows, std::size_t stride, const T* queries,
                 float* scores, std::size_t ld, cudaStream_t stream) {
  // Four rows a step measured faster than eight on an H100 (bench/results/neighbors.md).
  launch_gemv_rows<T, NQ, 4>(model, rows, stride, queries, scores, ld, stream);
}

std::size_t element_bytes(Precision p) {
  return p == Precision::Fp16 || p == Precision::Bf16 ? 2 : 4;
}

// Elements a stored row takes (padded to 16 bytes), and an fp16 copy's row (fp32/tf32).
std::size_t stored_stride(std::size_t dim, Precision p) {
  const std::size_t elem = element_bytes(p);
  return (dim * elem + 15) / 16 * 16 / elem;
}
std::size_t shadow_stride_of(std::size_t dim) { return (dim + 7) / 8 * 8; }

}  // namespace

struct GpuIndex final : gpu::BlockScorer {
  const Model& model;
  Precision precision;
  int device;
  std::size_t stride = 0;  // elements per stored row (16-byte multiple)
  bool resident = false;
  cuda::DeviceBuffer<std::byte> vectors;   // resident unit rows
  // fp32/tf32: an fp16 copy of the resident rows for the fused filter (when memory
  // allows), and the A block's unit rows in fp16 with their norms (made by load_a).
  cuda::DeviceBuffer<__half> shadow, shadow_queries;
  cuda::DeviceBuffer<float> query_norms;
  std::size_t shadow_stride = 0;
  // Raw float rows on their way to conversion: one staging area per stream that uses it.
  struct Staging {
    cuda::DeviceBuffer<float> rows;
    cuda::DeviceBuffer<float> norms;
  } staging_a, staging_b;
  std::size_t work_budget = 0;             // bytes left for the engine (0 = automatic)
  cuda::PinnedBuffer<float> pinned_directions;  // the batch, so its upload is asynchronous
  cuda::StagedCopy model_copy;             // the model's rows (pageable: a mapped file)
  // The final rescoring's inputs and outputs (in_exact_order), kept between batches.
  struct Exact {
    cuda::DeviceBuffer<float> queries, scores;
    cuda::DeviceBuffer<std::uint32_t> rows;
    cuda::DeviceBuffer<std::byte> gathered;  // a streamed model's listed rows
    std::optional<cuda::Stream> stream;
  } exact;
  gpu::Engine engine;
  cuda::CublasHandle cublas;  // (after the engine: destroyed while the engine's streams it ran on exist)
  const float* directions = nullptr;       // the batch being searched (host)
  std::size_t row_offset = 0;              // the batch's first model row (search_gpu's rows)
  double setup = 0;

  GpuIndex(const Model& m, const SearchOptions& options)
      : model(m), precision(options.precision), device(options.device.index), engine(options.device.index) {
    cuda::DeviceGuard guard(device);
    const std::size_t elem = element_bytes(precision);
    stride = stored_stride(model.dim, precision);
    cublas = cuda::make_cublas();
    const std::size_t model_bytes = model.rows * stride * elem;
    std::size_t budget = options.memory_budget;
    if (budget == 0) budget = gpu_memory(device).free / 10 * 9;
    // Resident when the model leaves at least a quarter of the budget for the work.
    resident = model_bytes <= budget / 4 * 3;
    if (resident) upload();
    std::size_t shadow_bytes = 0;
    if (resident && element_bytes(precision) == 4) {
      shadow_stride = shadow_stride_of(model.dim);
      shadow_bytes = model.rows * shadow_stride * 2;
      if (model_bytes + shadow_bytes <= budget / 4 * 3 && cuda::dot_candidates_supports(shadow_stride))
        make_shadow();
      else
        shadow_bytes = 0;
    }
    if (options.memory_budget != 0)
      work_budget = options.memory_budget - (resident ? model_bytes : 0) - shadow_bytes;
  }

  template <typename Fn>
  void with_type(Fn&& fn) const {
    switch (precision) {
      case Precision::Fp32:
      case Precision::Tf32: fn(float{}); break;
      case Precision::Fp16: fn(__half{}); break;
      case Precision::Bf16: fn(__nv_bfloat16{}); break;
    }
  }

  // Copies `count` host rows of dim floats to the device and writes them at `out` as
  // padded rows of the stored type, divided by `norms` when given (model rows, which are
  // pageable and go through the staged copy; a batch's directions are pinned already).
  void convert_rows(const float* source, std::size_t count, const float* norms, void* out,
                    Staging& staging, cudaStream_t stream) {
    if (staging.rows.size() < count * model.dim) {
      SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
      staging.rows.reset();
      staging.rows = cuda::DeviceBuffer<float>(count * model.dim);
    }
    float* raw = staging.rows.get();
    if (norms != nullptr)
      model_copy.copy(raw, source, count * model.dim * sizeof(float), stream);
    else
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(raw, source, count * model.dim * sizeof(float), cudaMemcpyHostToDevice, stream));
    const float* dev_norms = nullptr;
    if (norms != nullptr) {
      if (staging.norms.size() < count) {
        SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
        staging.norms.reset();
        staging.norms = cuda::DeviceBuffer<float>(count);
      }
      model_copy.copy(staging.norms.get(), norms, count * sizeof(float), stream);
      dev_norms = staging.norms.get();
    }
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((count + 7) / 8, 4096));
    with_type([&](auto tag) {
      using T = decltype(tag);
      scale_rows<T><<<blocks, 256, 0, stream>>>(raw, count, static_cast<int>(model.dim), dev_norms,
                                                static_cast<T*>(out), stride);
    });
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

  void upload() {
    const auto start = std::chrono::steady_clock::now();
    const std::size_t elem = element_bytes(precision);
    vectors = cuda::DeviceBuffer<std::byte>(model.rows * stride * elem);
    cuda::Stream stream;
    for (std::size_t first = 0; first < model.rows; first += kUploadChunkRows) {
      const std::size_t count = std::min(kUploadChunkRows, model.rows - first);
      convert_rows(model.vectors + first * model.dim, count, model.norms + first,
                   vectors.get() + first * stride * elem, staging_b, stream.get());
    }
    stream.sync();
    staging_b = Staging{};
    setup = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  void make_shadow() {
    shadow = cuda::DeviceBuffer<__half>(model.rows * shadow_stride);
    cuda::Stream stream;
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((model.rows + 7) / 8, 4096));
    scale_rows<__half><<<blocks, 256, 0, stream.get()>>>(reinterpret_cast<const float*>(vectors.get()), model.rows,
                                                         static_cast<int>(stride), nullptr, shadow.get(), shadow_stride);
    SIMKIT_CUDA_CHECK_LAUNCH();
    stream.sync();
  }

  // ---- gpu::BlockScorer
  std::size_t bytes_per_row_a() const override { return stride * element_bytes(precision); }
  std::size_t bytes_per_row_b() const override { return stride * element_bytes(precision); }
  bool b_resident() const override { return resident; }

  void load_a(RowRange rows, void* slot, gpu::Stream stream) override {
    // Each block of the batch has its own place in the pinned copy, so a later block's
    // host copy never overwrites rows still waiting for their transfer.
    const std::size_t offset = rows.begin * model.dim, count = rows.size() * model.dim;
    std::memcpy(pinned_directions.get() + offset, directions + offset, count * sizeof(float));
    convert_rows(pinned_directions.get() + offset, rows.size(), nullptr, slot, staging_a, stream);
    if (shadow.size() > 0) {
      // Once a block: the fp16 unit rows every launch of the fused filter reads.
      if (shadow_queries.size() < rows.size() * shadow_stride) {
        shadow_queries = cuda::DeviceBuffer<__half>(rows.size() * shadow_stride);
        query_norms = cuda::DeviceBuffer<float>(rows.size());
      }
      unit_half_rows<<<static_cast<unsigned>((rows.size() + 7) / 8), 256, 0, stream>>>(
          static_cast<const float*>(slot), rows.size(), stride, shadow_queries.get(), shadow_stride, query_norms.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
    }
  }
  void load_b(RowRange rows, void* slot, gpu::Stream stream) override {
    const std::size_t first = row_offset + rows.begin;
    convert_rows(model.vectors + first * model.dim, rows.size(), model.norms + first, slot, staging_b, stream);
  }
  bool offers_candidates() const override {
    if (shadow.size() > 0) return true;
    return resident && (precision == Precision::Fp16 || precision == Precision::Bf16) &&
           cuda::dot_candidates_supports(stride);
  }
  void offer_candidates(const void* a_slot, RowRange a, RowRange b, const float* state_scores,
                        const std::uint32_t* state_indices, int width, const gpu::CandidateLists& lists,
                        gpu::Stream stream) override {
    const std::size_t elem = element_bytes(precision);
    const cuda::TopKState state{const_cast<float*>(state_scores), const_cast<std::uint32_t*>(state_indices),
                                a.end, width};
    // Candidates are numbered from the batch's first row (b.begin counts from it).
    const std::size_t first = row_offset + b.begin;
    if (shadow.size() == 0) {
      cuda::dot_candidates(precision == Precision::Fp16 ? cuda::HalfType::Fp16 : cuda::HalfType::Bf16, a_slot,
                           a.size(), vectors.get() + first * stride * elem, b.size(), b.begin, stride, a.begin,
                           state, cuda::Filter{}, lists, stream);
      return;
    }
    // fp32/tf32: filter with the fp16 copies (made by load_a) and slack, then give the
    // survivors their exact scores before the engine merges them.
    const auto* queries = static_cast<const float*>(a_slot);
    cuda::dot_candidates(cuda::HalfType::Fp16, shadow_queries.get(), a.size(), shadow.get() + first * shadow_stride,
                         b.size(), b.begin, shadow_stride, a.begin, state,
                         cuda::Filter{query_norms.get(), kShadowSlack}, lists, stream);
    rescore_candidates<<<static_cast<unsigned>(a.size()), 256, 0, stream>>>(
        queries, reinterpret_cast<const float*>(vectors.get()) + row_offset * stride, stride, lists.scores,
        lists.indices, lists.counts,
        lists.capacity);
    SIMKIT_CUDA_CHECK_LAUNCH();
  }
  void score(const void* a_slot, RowRange a, const void* b_slot, RowRange b, float* tile,
             std::size_t ld, gpu::Stream stream) override {
    const std::size_t elem = element_bytes(precision);
    const void* rows_b =
        resident ? static_cast<const void*>(vectors.get() + (row_offset + b.begin) * stride * elem) : b_slot;
    const bool query_fits_smem = kGemvMaxQueries * stride * sizeof(float) <= 48 * 1024;
    if (a.size() <= static_cast<std::size_t>(kGemvMaxQueries) && query_fits_smem) {
      with_type([&](auto tag) {
        using T = decltype(tag);
        const T* e = static_cast<const T*>(rows_b);
        const T* q = static_cast<const T*>(a_slot);
        switch (a.size()) {
          case 1: launch_gemv<T, 1>(e, b.size(), stride, q, tile, ld, stream); break;
          case 2: launch_gemv<T, 2>(e, b.size(), stride, q, tile, ld, stream); break;
          case 3: launch_gemv<T, 3>(e, b.size(), stride, q, tile, ld, stream); break;
          default: launch_gemv<T, 4>(e, b.size(), stride, q, tile, ld, stream); break;
        }
      });
      return;
    }
    // tile (row-major a x b, stride ld) seen column-major is (b x a): E^T(b x k) * Q(k x a).
    SIMKIT_CUBLAS_CHECK(cublasSetStream(cublas.get(), stream));
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    with_type([&](auto tag) { type = Element<decltype(tag)>::type; });
    if (precision == Precision::Tf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    SIMKIT_CUBLAS_CHECK(cublasGemmEx(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(b.size()),
                                     static_cast<int>(a.size()), static_cast<int>(stride), &one, rows_b,
                                     type, static_cast<int>(stride), a_slot, type,
                                     static_cast<int>(stride), &zero, tile, CUDA_R_32F,
                                     static_cast<int>(ld), compute, CUBLAS_GEMM_DEFAULT));
  }
};

void GpuIndexDeleter::operator()(GpuIndex* index) const noexcept {
  if (index == nullptr) return;
  const int device = index->device;
  cudaSetDevice(device);
  delete index;
}

GpuIndexPtr make_gpu_index(const Model& model, const SearchOptions& options) {
  return GpuIndexPtr(new GpuIndex(model, options));
}

namespace {

// Every listed row scored again by exact_scores (see kExactMargin).
TopKLists in_exact_order(GpuIndex& index, const float* directions, const TopKLists& listed, std::size_t k) {
  const std::size_t queries = listed.rows, width = listed.k, dim = index.model.dim;
  const std::size_t elem = element_bytes(index.precision);
  GpuIndex::Exact& exact = index.exact;
  if (!exact.stream) exact.stream.emplace();
  const cudaStream_t stream = exact.stream->get();
  const auto fit = [&](auto& buffer, std::size_t count) {
    if (buffer.size() < count) {
      buffer.reset();
      buffer = std::remove_reference_t<decltype(buffer)>(count);
    }
  };
  // The rows each entry reads: the resident rows themselves, or (a model streamed through
  // the GPU) the listed rows gathered here and made unit rows as the engine makes them.
  std::vector<std::uint32_t> rows_of = listed.indices;
  if (!index.resident) {
    std::vector<float> rows, norms;
    std::uint32_t next = 0;
    for (std::uint32_t& at : rows_of) {
      if (at == kNoIndex) continue;
      const std::size_t row = index.row_offset + at;
      rows.insert(rows.end(), index.model.vectors + row * dim, index.model.vectors + (row + 1) * dim);
      norms.push_back(index.model.norms[row]);
      at = next++;
    }
    fit(exact.gathered, std::max<std::size_t>(next, 1) * index.stride * elem);
    if (next > 0) index.convert_rows(rows.data(), next, norms.data(), exact.gathered.get(), index.staging_b, stream);
    SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));  // (rows and norms are pageable, and go now)
  }
  fit(exact.queries, queries * dim);
  fit(exact.rows, rows_of.size());
  fit(exact.scores, rows_of.size());
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(exact.queries.get(), directions, queries * dim * sizeof(float),
                                    cudaMemcpyHostToDevice, stream));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(exact.rows.get(), rows_of.data(), rows_of.size() * sizeof(std::uint32_t),
                                    cudaMemcpyHostToDevice, stream));
  index.with_type([&](auto tag) {
    using T = decltype(tag);
    const auto* rows = index.resident ? reinterpret_cast<const T*>(index.vectors.get()) + index.row_offset * index.stride
                                      : reinterpret_cast<const T*>(exact.gathered.get());
    exact_scores<T><<<static_cast<unsigned>(queries), 256, 0, stream>>>(exact.queries.get(), dim, rows, index.stride,
                                                                          exact.rows.get(), width, exact.scores.get());
  });
  SIMKIT_CUDA_CHECK_LAUNCH();
  std::vector<float> scores(rows_of.size());
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(scores.data(), exact.scores.get(), scores.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return in_final_order(listed, scores, k);
}

}  // namespace

TopKLists search_gpu(GpuIndex& index, const float* directions, std::size_t queries, std::size_t k,
                     double* device_ms, std::optional<RowRange> rows) {
  cuda::DeviceGuard guard(index.device);
  PhaseClock clock("neighbors on GPU", index.device);
  const RowRange searched = rows.value_or(RowRange{0, index.model.rows});
  if (searched.end > index.model.rows || searched.begin > searched.end)
    throw Failure(cat("search_gpu: rows [", searched.begin, ", ", searched.end, ") outside the index's ",
                      index.model.rows));
  index.directions = directions;
  index.row_offset = searched.begin;
  if (index.pinned_directions.size() < queries * index.model.dim)
    index.pinned_directions = cuda::PinnedBuffer<float>(queries * index.model.dim);
  PairwiseJob job;
  job.rows_a = queries;
  job.rows_b = searched.size();
  job.k = k + kExactMargin;
  job.memory_budget = index.work_budget;
  const TopKLists listed = index.engine.run(job, index).topk;
  index.directions = nullptr;
  if (device_ms != nullptr) *device_ms = index.engine.last_ms();
  clock.mark("the engine's lists");
  // The engine's blocks of A left the whole batch in pinned memory (a fast upload).
  TopKLists found = in_exact_order(index, searched.size() > 0 ? index.pinned_directions.get() : directions, listed, k);
  clock.mark("exact scores and order");
  index.row_offset = 0;
  return found;
}

std::size_t gpu_index_bytes(const Model& model, Precision precision) {
  const std::size_t elem = element_bytes(precision);
  std::size_t bytes = model.rows * stored_stride(model.dim, precision) * elem;
  if (elem == 4) bytes += model.rows * shadow_stride_of(model.dim) * 2;  // the fp16 copy the filter reads
  return bytes;
}

double gpu_setup_ms(const GpuIndex& index) { return index.setup; }

}  // namespace simkit::neighbors::detail
