// The tiled product's tiles (instantiated here), its launcher, and the seed's study
// beside cuBLAS (include/simkit/gemm.hpp).
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <span>
#include <string>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/memory.hpp"
#include "core/text.hpp"
#include "engine/cuda/tiled_gemm.cuh"
#ifdef SIMKIT_HAVE_WGMMA
#include "engine/cuda/gemm_wgmma.hpp"
#endif
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"

namespace simkit::gemm {

namespace {

using Launch = void (*)(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                        cudaStream_t stream);

template <int TM, int TN, int BK>
void launch_store(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                  cudaStream_t stream) {
  constexpr auto kernel = detail::tiled_kernel<TM, TN, BK, detail::Store>;
  constexpr std::size_t shared = detail::shared_bytes<TM, TN, BK>();
  cuda::allow_dynamic_shared<kernel>(shared);
  const dim3 grid(static_cast<unsigned>((n + 16 * TN - 1) / (16 * TN)),
                  static_cast<unsigned>((m + 16 * TM - 1) / (16 * TM)));
  if (grid.y > 65535) throw UsageError("a product of " + std::to_string(m) + " rows is too tall for the tiled kernel");
  kernel<<<grid, detail::kThreads, shared, stream>>>(m, n, k, a, b, detail::Store{{}, c, n});
  SIMKIT_CUDA_CHECK_LAUNCH();
}

struct Entry {
  Tile tile;
  Launch launch;
};

// The study's grid: square register tiles 1..16 (32 x 32 would hold 1024 accumulators a
// thread, past any register file: the seed saw it collapse), some oblong ones, and
// shared-memory depths 8, 16 and 32.
#define SIMKIT_TILE(TM, TN, BK) Entry{Tile{TM, TN, BK}, &launch_store<TM, TN, BK>}
std::span<const Entry> entries() {
  static const Entry all[] = {
      SIMKIT_TILE(1, 1, 8),  SIMKIT_TILE(1, 1, 16),  SIMKIT_TILE(1, 1, 32),  SIMKIT_TILE(2, 2, 8),
      SIMKIT_TILE(2, 2, 16), SIMKIT_TILE(2, 2, 32),  SIMKIT_TILE(4, 4, 8),   SIMKIT_TILE(4, 4, 16),
      SIMKIT_TILE(4, 4, 32), SIMKIT_TILE(4, 8, 8),   SIMKIT_TILE(4, 8, 16),  SIMKIT_TILE(8, 4, 8),
      SIMKIT_TILE(8, 4, 16), SIMKIT_TILE(8, 8, 8),   SIMKIT_TILE(8, 8, 16),  SIMKIT_TILE(8, 8, 32),
      SIMKIT_TILE(8, 16, 8), SIMKIT_TILE(8, 16, 16), SIMKIT_TILE(16, 8, 8),  SIMKIT_TILE(16, 8, 16),
      SIMKIT_TILE(16, 16, 8), SIMKIT_TILE(16, 16, 16)};
  return {all, sizeof all / sizeof all[0]};
}
#undef SIMKIT_TILE

const Entry& entry_of(const Tile& tile) {
  for (const Entry& e : entries())
    if (e.tile.tm == tile.tm && e.tile.tn == tile.tn && e.tile.bk == tile.bk) return e;
  throw UsageError("no tiled kernel for tile " + tile.name());
}

__global__ void fill_kernel(float* x, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned long long z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    x[i] = static_cast<float>(static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53 * 2 - 1);
  }
}

// out[0] = max |c - ref|, out[1] = max |ref| (as the bits of non-negative floats).
// (ref: fp32, or float64 for the errors against exact products.)
template <typename Ref>
__global__ void error_kernel(const float* c, const Ref* ref, std::size_t n, unsigned* out) {
  float diff = 0, scale = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    diff = fmaxf(diff, static_cast<float>(fabs(c[i] - ref[i])));
    scale = fmaxf(scale, static_cast<float>(fabs(ref[i])));
    if (!(c[i] == c[i])) diff = INFINITY;  // NaN never passes
  }
  atomicMax(out, __float_as_uint(diff));
  atomicMax(out + 1, __float_as_uint(scale));
}

// max |c - ref| / max |ref| over n entries (device memory; `scratch` holds two unsigneds).
template <typename Ref>
double relative_error(const float* c, const Ref* ref, std::size_t n, unsigned* scratch) {
  SIMKIT_CUDA_CHECK(cudaMemset(scratch, 0, 2 * sizeof(unsigned)));
  error_kernel<<<1024, 256>>>(c, ref, n, scratch);
  SIMKIT_CUDA_CHECK_LAUNCH();
  unsigned bits[2];
  SIMKIT_CUDA_CHECK(cudaMemcpy(bits, scratch, sizeof bits, cudaMemcpyDeviceToHost));
  float diff, scale;
  std::memcpy(&diff, &bits[0], 4);
  std::memcpy(&scale, &bits[1], 4);
  return scale > 0 ? diff / scale : diff;
}

__global__ void widen_kernel(const float* x, double* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = x[i];
}

// The median of `reps` timed runs of body() (device events), after one untimed.
template <typename Body>
double median_ms(int reps, Body&& body) {
  cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
  body();
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    start.record(nullptr);
    body();
    stop.record(nullptr);
    SIMKIT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    ms.push_back(cuda::elapsed_ms(start, stop));
  }
  std::sort(ms.begin(), ms.end());
  return static_cast<double>(ms[ms.size() / 2]);
}

// DISCO rows [M | A] (halves of `pitch` floats, f features each, zeros after): M_j 0/1
// with the given density, A_j = M_j x U(0, 1).
__global__ void lin_rows_kernel(float* rows, std::size_t count, std::size_t f, std::size_t pitch, double density,
                                unsigned long long seed) {
  const std::size_t total = count * f;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    unsigned long long z = (e + 1) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 40) * 0x1.0p-24, v = static_cast<double>(z & 0xFFFFFF) * 0x1.0p-24;
    const bool on = u < density;
    float* row = rows + e / f * 2 * pitch;
    row[e % f] = on ? 1.0f : 0.0f;
    row[pitch + e % f] = on ? static_cast<float>(v) : 0.0f;
  }
}

// out[r] = the sum of `width` floats of row r from column `from` (rows `stride` apart);
// with `inverse`, 1 / sqrt of the sum of squares (0 for a zero row).
__global__ void row_sums_kernel(const float* rows, std::size_t count, std::size_t stride, std::size_t from,
                                std::size_t width, int mode, float* out) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < count;
       r += std::size_t{gridDim.x} * blockDim.x) {
    double sum = 0;
    for (std::size_t c = 0; c < width; ++c) {
      const double x = rows[r * stride + from + c];
      sum += mode == 0 ? x : x * x;
    }
    out[r] = mode == 2 ? (sum > 0 ? static_cast<float>(1 / std::sqrt(sum)) : 0.0f) : static_cast<float>(sum);
  }
}
enum RowSum { kSum = 0, kSquares = 1, kInverseNorm = 2 };

}  // namespace

const std::vector<Tile>& tiles() {
  static const std::vector<Tile> all = [] {
    std::vector<Tile> out;
    for (const Entry& e : entries()) out.push_back(e.tile);
    return out;
  }();
  return all;
}

const std::vector<TensorTile>& tensor_tiles() {
  static const std::vector<TensorTile> none;
#ifdef SIMKIT_HAVE_WGMMA
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
      minor == 0)
    return detail::tensor_tiles_impl();
#endif
  return none;
}

void multiply_tf32(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a,
                   const float* b, float* c) {
  if (tensor_tiles().empty())
    throw UsageError("the TF32 tensor-core product needs a compute-capability 9.0 GPU (Hopper) and an sm_90a build");
  if (k % 4 != 0 || reinterpret_cast<std::uintptr_t>(a) % 16 != 0 || reinterpret_cast<std::uintptr_t>(b) % 16 != 0)
    throw UsageError("the TF32 tensor-core product needs k a multiple of 4 and 16-byte aligned operands (k = " +
                     std::to_string(k) + ")");
  if (tile.fp16) throw UsageError("tile " + tile.name() + " takes fp16 operands (multiply_fp16)");
  if (m == 0 || n == 0) return;
#ifdef SIMKIT_HAVE_WGMMA
  detail::multiply_tf32_impl(tile, m, n, k, a, b, c, nullptr);
#endif
}

void multiply(const Tile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
              float* c) {
  if (m == 0 || n == 0) return;
  entry_of(tile).launch(m, n, k, a, b, c, nullptr);
}

std::vector<Timing> study(const StudyOptions& options) {
  SIMKIT_CUDA_CHECK(cudaSetDevice(options.device));
  const std::size_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  const std::size_t count = largest * largest;
  cuda::DeviceBuffer<float> a(count), b(count), c(count), ref(count);
  cuda::DeviceBuffer<unsigned> error(2);
  fill_kernel<<<1024, 256>>>(a.get(), count, 1);
  fill_kernel<<<1024, 256>>>(b.get(), count, 2);
  SIMKIT_CUDA_CHECK_LAUNCH();
  const cuda::CublasHandle handle = cuda::make_cublas();
  cublasHandle_t blas = handle.get();
  const auto time = [&](auto&& body) { return median_ms(options.reps, body); };
  std::vector<Timing> out;
  for (const std::size_t s : options.sizes) {
    const int n = static_cast<int>(s);
    const double flops = 2.0 * double(s) * double(s) * double(s);
    const float one = 1, zero = 0;
    // Row-major C = A B is column-major C^T = B^T A^T.
    const auto cublas = [&](float* into) {
      SIMKIT_CUBLAS_CHECK(
          cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.get(), n, a.get(), n, &zero, into, n));
    };
    for (const bool tf32 : {false, true}) {
      SIMKIT_CUBLAS_CHECK(cublasSetMathMode(blas, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
      const double ms = time([&] { cublas(tf32 ? c.get() : ref.get()); });
      out.push_back({tf32 ? "cuBLAS tf32" : "cuBLAS fp32", s, ms, flops / ms / 1e9, 0});
    }
    SIMKIT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    cublas(ref.get());  // the fp32 reference
    for (const Entry& e : entries()) {
      SIMKIT_CUDA_CHECK(cudaMemset(c.get(), 0xFF, s * s * sizeof(float)));  // NaN: every entry must be written
      const double ms = time([&] { e.launch(s, s, s, a.get(), b.get(), c.get(), nullptr); });
      out.push_back({e.tile.name(), s, ms, flops / ms / 1e9, relative_error(c.get(), ref.get(), s * s, error.get())});
    }
    // C = A . B^T (B as rows along K, the tensor-core kernel's layout): cuBLAS TF32 and
    // fp32 (the reference) on it, then each tensor tile.
    if (tensor_tiles().empty() || s % 4 != 0) continue;  // the tensor tiles take K a multiple of 4
    const auto cublas_nt = [&](float* into) {
      SIMKIT_CUBLAS_CHECK(
          cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, b.get(), n, a.get(), n, &zero, into, n));
    };
    // The exact product (float64, cuBLAS DGEMM on the operands widened) for every row's
    // error against it.
    cuda::DeviceBuffer<double> a64(s * s), b64(s * s), c64(s * s);
    widen_kernel<<<1024, 256>>>(a.get(), a64.get(), s * s);
    widen_kernel<<<1024, 256>>>(b.get(), b64.get(), s * s);
    SIMKIT_CUDA_CHECK_LAUNCH();
    const double one64 = 1, zero64 = 0;
    SIMKIT_CUBLAS_CHECK(
        cublasDgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one64, b64.get(), n, a64.get(), n, &zero64, c64.get(), n));
    const auto exact_error = [&](const float* got) { return relative_error(got, c64.get(), s * s, error.get()); };
    SIMKIT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_TF32_TENSOR_OP_MATH));
    const double nt_ms = time([&] { cublas_nt(c.get()); });
    out.push_back({"cuBLAS tf32 A.B^T", s, nt_ms, flops / nt_ms / 1e9, 0, exact_error(c.get())});
    SIMKIT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    const double nt_fp32_ms = time([&] { cublas_nt(ref.get()); });
    out.push_back({"cuBLAS fp32 A.B^T", s, nt_fp32_ms, flops / nt_fp32_ms / 1e9, 0, exact_error(ref.get())});
    // fp16 operands (s a multiple of 8): cuBLAS on the same layout, then the fp16 tiles.
    cuda::DeviceBuffer<std::uint16_t> a16(s % 8 == 0 ? s * s : 0), b16(s % 8 == 0 ? s * s : 0);
    if (s % 8 == 0) {
      to_fp16(a.get(), s * s, 1.0f, a16.get());
      to_fp16(b.get(), s * s, 1.0f, b16.get());
      const double h_ms = time([&] {
        SIMKIT_CUBLAS_CHECK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, b16.get(), CUDA_R_16F, n,
                                         a16.get(), CUDA_R_16F, n, &zero, c.get(), CUDA_R_32F, n,
                                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      });
      out.push_back({"cuBLAS fp16 A.B^T", s, h_ms, flops / h_ms / 1e9, 0, exact_error(c.get())});
    }
    for (const TensorTile& tile : tensor_tiles()) {
      if (tile.fp16 && s % 8 != 0) continue;
      SIMKIT_CUDA_CHECK(cudaMemset(c.get(), 0xFF, s * s * sizeof(float)));
      const double ms = time([&] {
        if (tile.fp16)
          multiply_fp16(tile, s, s, s, a16.get(), b16.get(), c.get());
        else
          multiply_tf32(tile, s, s, s, a.get(), b.get(), c.get());
      });
      out.push_back({tile.name(), s, ms, flops / ms / 1e9, relative_error(c.get(), ref.get(), s * s, error.get()),
                     exact_error(c.get())});
    }
    // fp32 accuracy as three TF32 products (the split included in the time).
    SIMKIT_CUDA_CHECK(cudaMemset(c.get(), 0xFF, s * s * sizeof(float)));
    const double x3_ms = time([&] { multiply_tf32x3(s, s, s, a.get(), b.get(), c.get()); });
    out.push_back({"wgmma 3xTF32 (fp32) 128x128/6", s, x3_ms, flops / x3_ms / 1e9,
                   relative_error(c.get(), ref.get(), s * s, error.get()), exact_error(c.get())});
  }
  return out;
}

std::vector<FusedTiming> fused_study(const FusedOptions& options) {
  SIMKIT_CUDA_CHECK(cudaSetDevice(options.device));
  if (tensor_tiles().empty()) throw UsageError("the fused jobs run on simkit's Hopper kernel (compute capability 9.0)");
  std::vector<FusedTiming> out;
  const int top = options.top;
  // Runs both paths (fused(scores, columns), base(scores, columns)) on one job and
  // compares their answers slot by slot.
  const auto compare = [&](const std::string& name, std::size_t m, std::size_t n, std::size_t k, auto&& fused,
                           auto&& base) {
    cuda::DeviceBuffer<float> fused_s(m * top), base_s(m * top);
    cuda::DeviceBuffer<std::uint32_t> fused_c(m * top), base_c(m * top);
    FusedTiming t{name, m, n, k};
    t.fused_ms = median_ms(options.reps, [&] { fused(fused_s.get(), fused_c.get()); });
    t.cublas_ms = median_ms(options.reps, [&] { base(base_s.get(), base_c.get()); });
    std::vector<float> fs(m * top), bs(m * top);
    std::vector<std::uint32_t> fc(m * top), bc(m * top);
    SIMKIT_CUDA_CHECK(cudaMemcpy(fs.data(), fused_s.get(), fs.size() * sizeof(float), cudaMemcpyDeviceToHost));
    SIMKIT_CUDA_CHECK(cudaMemcpy(bs.data(), base_s.get(), bs.size() * sizeof(float), cudaMemcpyDeviceToHost));
    SIMKIT_CUDA_CHECK(cudaMemcpy(fc.data(), fused_c.get(), fc.size() * 4, cudaMemcpyDeviceToHost));
    SIMKIT_CUDA_CHECK(cudaMemcpy(bc.data(), base_c.get(), bc.size() * 4, cudaMemcpyDeviceToHost));
    std::size_t same = 0;
    double diff = 0, scale = 0;
    for (std::size_t e = 0; e < fs.size(); ++e) {
      same += fc[e] == bc[e];
      diff = std::max(diff, std::fabs(double(fs[e]) - bs[e]));
      scale = std::max(scale, std::fabs(double(bs[e])));
    }
    t.same_columns = fs.empty() ? 1.0 : double(same) / double(fs.size());
    t.max_score_difference = scale > 0 ? diff / scale : diff;
    out.push_back(t);
  };
  const auto job = [&](const std::string& name, const ScoreSpec& spec, std::size_t m, std::size_t n,
                       std::size_t k, const float* a, const float* b) {
    compare(
        name, m, n, k, [&](float* s, std::uint32_t* c) { top_k_tf32(spec, m, n, k, a, b, top, s, c); },
        [&](float* s, std::uint32_t* c) { top_k_cublas(spec, m, n, k, a, b, top, s, c); });
  };
  const std::string top_name = " top-" + std::to_string(top);
  {
    const std::size_t m = options.queries, n = options.rows, k = options.dims;
    cuda::DeviceBuffer<float> a(m * k), b(n * k), norm_a(m), norm_b(n);
    fill_kernel<<<1024, 256>>>(a.get(), m * k, 3);
    fill_kernel<<<1024, 256>>>(b.get(), n * k, 4);
    SIMKIT_CUDA_CHECK_LAUNCH();
    row_sums_kernel<<<1024, 256>>>(a.get(), m, k, 0, k, kInverseNorm, norm_a.get());
    row_sums_kernel<<<1024, 256>>>(b.get(), n, k, 0, k, kInverseNorm, norm_b.get());
    job("cosine" + top_name, {Score::Cosine, norm_a.get(), norm_b.get()}, m, n, k, a.get(), b.get());
    row_sums_kernel<<<1024, 256>>>(a.get(), m, k, 0, k, kSquares, norm_a.get());
    row_sums_kernel<<<1024, 256>>>(b.get(), n, k, 0, k, kSquares, norm_b.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    job("squared distance" + top_name, {Score::SquaredDistance, norm_a.get(), norm_b.get()}, m, n, k, a.get(),
        b.get());
  }
  if (options.lin_words > 0) {
    const std::size_t w = options.lin_words, f = options.lin_features;
    // Each half padded to a multiple of 64 elements, as DISCO's dense rows are
    // (disco/dense.hpp): the rotation is then whole 128-byte slices in TF32 and in fp16,
    // which the TMA loader needs.
    const std::size_t pitch = (f + 63) / 64 * 64;
    cuda::DeviceBuffer<float> rows(w * 2 * pitch), sums(w);
    SIMKIT_CUDA_CHECK(cudaMemset(rows.get(), 0, w * 2 * pitch * sizeof(float)));
    lin_rows_kernel<<<1024, 256>>>(rows.get(), w, f, pitch, options.lin_density, 5);
    row_sums_kernel<<<1024, 256>>>(rows.get(), w, 2 * pitch, pitch, f, kSum, sums.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    const ScoreSpec lin{Score::Lin, sums.get(), sums.get(), pitch};
    job("Lin" + top_name, lin, w, w, 2 * pitch, rows.get(), rows.get());
    // The self-join (each pair once, a word never its own neighbour) in both precisions,
    // against the pairwise engine's symmetric cuBLAS path in the same one.
    if (top <= kMaxSelfTop) {
      cuda::DeviceBuffer<std::uint16_t> rows16(w * 2 * pitch);
      to_fp16(rows.get(), w * 2 * pitch, 1.0f, rows16.get());
      for (const auto& [operands, data] : {std::pair<Operands, const void*>{Operands::tf32, rows.get()},
                                           std::pair<Operands, const void*>{Operands::fp16, rows16.get()}}) {
        compare(
            std::string("Lin self-join") + top_name + " " + operands_name(operands), w, w, 2 * pitch,
            [&](float* s, std::uint32_t* c) { self_top_k(lin, operands, w, 2 * pitch, data, top, s, c); },
            [&](float* s, std::uint32_t* c) { self_top_k_cublas(lin, operands, w, 2 * pitch, data, top, s, c); });
      }
    }
  }
  return out;
}

}  // namespace simkit::gemm
