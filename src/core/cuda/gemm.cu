// The tiled product's tiles (instantiated here), its launcher, and the seed's study
// beside cuBLAS (include/simkit/gemm.hpp).
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/tiled_gemm.cuh"
#ifdef SIMKIT_HAVE_WGMMA
#include "core/cuda/gemm_wgmma.hpp"
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
  kernel<<<grid, detail::kThreads, shared, stream>>>(m, n, k, a, b, detail::Store{c, n});
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
__global__ void error_kernel(const float* c, const float* ref, std::size_t n, unsigned* out) {
  float diff = 0, scale = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    diff = fmaxf(diff, fabsf(c[i] - ref[i]));
    scale = fmaxf(scale, fabsf(ref[i]));
    if (!(c[i] == c[i])) diff = INFINITY;  // NaN never passes
  }
  atomicMax(out, __float_as_uint(diff));
  atomicMax(out + 1, __float_as_uint(scale));
}

// max |c - ref| / max |ref| over n entries (device memory; `scratch` holds two unsigneds).
double relative_error(const float* c, const float* ref, std::size_t n, unsigned* scratch) {
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
  cublasHandle_t blas = nullptr;
  SIMKIT_CUBLAS_CHECK(cublasCreate(&blas));
  cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
  // The median of `reps` timed runs of body(), after one untimed.
  const auto time = [&](auto&& body) {
    body();
    std::vector<float> ms;
    for (int r = 0; r < options.reps; ++r) {
      start.record(nullptr);
      body();
      stop.record(nullptr);
      SIMKIT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      ms.push_back(cuda::elapsed_ms(start, stop));
    }
    std::sort(ms.begin(), ms.end());
    return static_cast<double>(ms[ms.size() / 2]);
  };
  std::vector<Timing> out;
  try {
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
      SIMKIT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_TF32_TENSOR_OP_MATH));
      const double nt_ms = time([&] { cublas_nt(c.get()); });
      out.push_back({"cuBLAS tf32 A.B^T", s, nt_ms, flops / nt_ms / 1e9, 0});
      SIMKIT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
      cublas_nt(ref.get());
      for (const TensorTile& tile : tensor_tiles()) {
        SIMKIT_CUDA_CHECK(cudaMemset(c.get(), 0xFF, s * s * sizeof(float)));
        const double ms = time([&] { multiply_tf32(tile, s, s, s, a.get(), b.get(), c.get()); });
        out.push_back({tile.name(), s, ms, flops / ms / 1e9, relative_error(c.get(), ref.get(), s * s, error.get())});
      }
    }
  } catch (...) {
    cublasDestroy(blas);
    throw;
  }
  cublasDestroy(blas);
  return out;
}

}  // namespace simkit::gemm
