// simkit's tensor-core product for Hopper (sm_90a): C = A . B^T in TF32 on warpgroup MMA
// (wgmma), both operands K-major (rows of A and of B run along K), the epilogue a template
// argument like the CUDA-core kernel's (tiled_gemm.cuh).
//
// A block (two warpgroups, 256 threads) computes a 128 x BN tile of C. K is streamed in
// slices of 32 floats (128-byte rows, 128-byte swizzle, core/cuda/wgmma.cuh) through a
// ring of `Stages` slices of A and B, filled by cp.async from all threads. Warpgroup g
// multiplies A rows 64 g.. of the tile by all BN rows of B with m64nBNk8 instructions,
// BN / 2 fp32 accumulators a thread. A slice is refilled two steps after the MMAs that
// read it were issued, once every thread has seen them complete (wgmma.wait_group 1
// before the next barrier). Blocks go through C in groups of 8 row tiles, so that the
// blocks running at once share rows of B in L2.
//
// TF32 reads the top 19 bits of each fp32 operand (sign, exponent, 10 fraction bits).
#include <algorithm>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "core/cuda/fused_device.cuh"
#include "core/cuda/gemm_wgmma.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/tiled_gemm.cuh"
#include "core/cuda/wgmma.cuh"
#include "core/text.hpp"
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"

namespace simkit::gemm::detail {

namespace {

constexpr int kTileM = 128;
constexpr int kWgThreads = 256;

template <int BN, int Stages>
constexpr std::size_t smem_bytes() {
  return std::size_t(Stages) * (kTileM + BN) * 128 + 1024;  // + 1 KiB: 1024-byte alignment
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kSlice = 32;  // floats of K a stage holds (128 bytes a row)

using cuda::fused::copy16;
using cuda::fused::copy_commit;
using cuda::fused::copy_wait;
using cuda::wgmma::descriptor;
using cuda::wgmma::swizzled;

#define SIMKIT_WGMMA_TF32_N128                                                                 \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                      \
               "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "                      \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"                          \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate))

#define SIMKIT_WGMMA_TF32_N192                                                                 \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"                      \
               "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32 "                      \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1;\n}\n"                          \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]) \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate))

#define SIMKIT_WGMMA_TF32_N256                                                                 \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                      \
               "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "                      \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1;\n}\n"                          \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate))

template <int BN>
__device__ __forceinline__ void wgmma_tf32(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) {
  if constexpr (BN == 128)
    SIMKIT_WGMMA_TF32_N128;
  else if constexpr (BN == 192)
    SIMKIT_WGMMA_TF32_N192;
  else
    SIMKIT_WGMMA_TF32_N256;
}
#undef SIMKIT_WGMMA_TF32_N128
#undef SIMKIT_WGMMA_TF32_N192
#undef SIMKIT_WGMMA_TF32_N256

// K slice `slice` of rows [first, first + ROWS) (of `count`, `k` floats each) into a tile;
// each row read from column `rotate` on, wrapping (a multiple of 4).
template <int ROWS>
__device__ __forceinline__ void copy_slice(unsigned tile, const float* rows, std::size_t first, std::size_t count,
                                           std::size_t k, int slice, std::size_t rotate) {
  const int chunk = threadIdx.x & 7;
  const std::size_t kk = static_cast<std::size_t>(slice) * kSlice + chunk * 4;
  const std::size_t column = kk + rotate < k ? kk + rotate : kk + rotate - k;
#pragma unroll
  for (int n = 0; n < ROWS / 32; ++n) {
    const int row = static_cast<int>(threadIdx.x >> 3) + n * 32;
    const bool inside = first + row < count && kk < k;
    copy16(tile + swizzled(row, chunk), inside ? rows + (first + row) * k + column : rows, inside ? 16 : 0);
  }
}

#endif

template <int BN, int Stages, int Group, typename Epilogue>
__global__ void __launch_bounds__(kWgThreads, 1)
    wgmma_tf32_kernel(std::size_t m, std::size_t n, std::size_t k, const float* __restrict__ a,
                      std::size_t a_rotate, const float* __restrict__ b, Epilogue epilogue) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const unsigned base = (static_cast<unsigned>(__cvta_generic_to_shared(smem_raw)) + 1023u) & ~1023u;
  constexpr unsigned kABytes = kTileM * 128, kStageBytes = (kTileM + BN) * 128;
  // Grouped raster: Group row tiles, then the next column tile.
  const std::size_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + BN - 1) / BN;
  const std::size_t per_group = Group * tiles_n, id = blockIdx.x;
  const std::size_t first_m = id / per_group * Group;
  const std::size_t rows_in_group = tiles_m - first_m < Group ? tiles_m - first_m : Group;
  const std::size_t tile_m = first_m + id % per_group % rows_in_group, tile_n = id % per_group / rows_in_group;
  const std::size_t row0 = tile_m * kTileM, col0 = tile_n * BN;
  const int slices = static_cast<int>((k + kSlice - 1) / kSlice);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, group = warp >> 2;

  constexpr int kAhead = Stages - 2;
  int loaded = 0;
  const auto issue = [&] {
    if (loaded < slices) {
      const unsigned stage = base + (loaded % Stages) * kStageBytes;
      copy_slice<kTileM>(stage, a, row0, m, k, loaded, a_rotate);
      copy_slice<BN>(stage + kABytes, b, col0, n, k, loaded, 0);
    }
    ++loaded;
    copy_commit();
  };
#pragma unroll
  for (int s = 0; s < kAhead; ++s) issue();

  float d[BN / 2];
#pragma unroll
  for (int e = 0; e < BN / 2; ++e) d[e] = 0.0f;
  for (int step = 0; step < slices; ++step) {
    copy_wait<kAhead - 1>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the copies, seen by wgmma
    __syncthreads();
    issue();
    const unsigned stage = base + (step % Stages) * kStageBytes;
    const std::uint64_t desc_a = descriptor(stage + group * 64 * 128);
    const std::uint64_t desc_b = descriptor(stage + kABytes);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kSlice / 8; ++kk) wgmma_tf32<BN>(d, desc_a + 2 * kk, desc_b + 2 * kk, step > 0 || kk > 0);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  copy_wait<0>();

  // d[4 j + e]: row 64 group + 16 (warp % 4) + lane / 4 + 8 (e / 2), column 8 j + 2 (lane % 4) + e % 2.
  const std::size_t row_base = row0 + group * 64 + (warp & 3) * 16 + (lane >> 2);
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::size_t row = row_base + 8 * (e >> 1), col = col0 + 8 * j + 2 * (lane & 3) + (e & 1);
      if (row < m && col < n) epilogue(row, col, d[4 * j + e]);
    }
#endif
}

template <int BN, int Stages, int Group, typename Epilogue>
void launch_tf32(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t a_rotate, const float* b,
                 Epilogue epilogue, cudaStream_t stream) {
  constexpr auto kernel = wgmma_tf32_kernel<BN, Stages, Group, Epilogue>;
  constexpr std::size_t shared = smem_bytes<BN, Stages>();
  cuda::allow_dynamic_shared<kernel>(shared);
  const std::size_t blocks = ((m + kTileM - 1) / kTileM) * ((n + BN - 1) / BN);
  if (blocks > 0x7fffffff) throw UsageError(cat("a product of ", m, " x ", n, " is too large for the TF32 kernel"));
  kernel<<<static_cast<unsigned>(blocks), kWgThreads, shared, stream>>>(m, n, k, a, a_rotate, b, epilogue);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace

const std::vector<TensorTile>& tensor_tiles_impl() {
  static const std::vector<TensorTile> all{{128, 256, 4, 8}, {128, 192, 5, 8}, {128, 128, 6, 8}};
  return all;
}

void multiply_tf32_impl(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a,
                        const float* b, float* c, cudaStream_t stream) {
  const auto is = [&](int bn, int stages, int group) {
    return tile.bm == kTileM && tile.bn == bn && tile.stages == stages && tile.group == group;
  };
  const Store store{c, n};
  if (is(256, 4, 8)) return launch_tf32<256, 4, 8>(m, n, k, a, 0, b, store, stream);
  if (is(192, 5, 8)) return launch_tf32<192, 5, 8>(m, n, k, a, 0, b, store, stream);
  if (is(128, 6, 8)) return launch_tf32<128, 6, 8>(m, n, k, a, 0, b, store, stream);
  throw UsageError("no TF32 kernel for tile " + tile.name());
}

void lin_scores_tf32(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t a_rotate,
                     const float* b, const float* sums_a, const float* sums_b, float* c, std::size_t ld,
                     cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  launch_tf32<256, 4, 8>(m, n, k, a, a_rotate, b, LinScore{c, ld, sums_a, sums_b}, stream);
}

}  // namespace simkit::gemm::detail
