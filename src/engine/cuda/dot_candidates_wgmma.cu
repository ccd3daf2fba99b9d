// The fused kernel of dot_candidates.hpp for Hopper (sm_90a): the same work as the
// mma.sync kernel of dot_candidates.cu, on warpgroup MMA (wgmma), which reads both
// operands straight from shared memory and runs asynchronously beside the copies.
//
// A block (two warpgroups) keeps 128 rows of A in shared memory and streams tiles of
// 128 rows of B through a ring of kStages slices of 64 elements (128-byte rows, the
// 128-byte swizzle wgmma's descriptors describe: chunk c of row r at c ^ (r % 8), in
// 8-row atoms of 1024 bytes). Warpgroup g scores B rows 64g.. of each tile against all
// 128 A rows with m64n128k16 instructions, 64 fp32 accumulators a thread. A slice is
// refilled two steps after the MMAs that read it were issued, once every thread has
// seen them complete (wgmma.wait_group 1 before the next barrier).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "engine/cuda/dot_candidates_wgmma.hpp"
#include "engine/cuda/fused_device.cuh"
#include "engine/cuda/wgmma.cuh"

namespace simkit::cuda::detail {

namespace {

constexpr int kTileB = 128;
constexpr int kTileA = 128;
constexpr int kSlice = 64;  // elements of K a stage holds (128 bytes a row)
constexpr int kStages = 6;
constexpr int kThreads = 256;
constexpr unsigned kSliceBytes = kTileB * kSlice * 2;  // 16 KiB, A or B
static_assert(kTileA == kTileB, "slices of A and B share one size");
constexpr std::size_t kMaxSmemBytes = fused::kMaxSharedBytes - kTileA * 8;  // dynamic, beside the bars

__host__ __device__ inline std::size_t slices_of(std::size_t stride) { return (stride + kSlice - 1) / kSlice; }
// 1 KiB of slack: the swizzle needs 1024-byte aligned tiles, dynamic memory gives 16.
std::size_t smem_bytes(std::size_t stride) { return (slices_of(stride) + kStages) * kSliceBytes + 1024; }

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using fused::copy16;
using fused::copy_commit;
using fused::copy_wait;

using wgmma::descriptor;
using wgmma::swizzled;

// One m64n128k16 MMA of the warpgroup, both operands from shared memory.
template <HalfType H>
__device__ __forceinline__ void wgmma_128(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) {
  if constexpr (H == HalfType::Fp16)
    SIMKIT_WGMMA(128, "k16.f32.f16.f16", ", 0, 0");
  else
    SIMKIT_WGMMA(128, "k16.f32.bf16.bf16", ", 0, 0");
}

// Copies K slice `slice` of rows [first, first + 128) (of `count`) into a tile: 1024
// chunks, four a thread.
__device__ __forceinline__ void copy_slice(unsigned tile, const std::uint16_t* rows, std::size_t first,
                                           std::size_t count, std::size_t stride, int slice) {
  const int chunk = threadIdx.x & 7;
  const std::size_t k = static_cast<std::size_t>(slice) * kSlice + chunk * 8;
#pragma unroll
  for (int n = 0; n < 4; ++n) {
    const int row = static_cast<int>(threadIdx.x >> 3) + n * 32;
    const bool inside = first + row < count && k < stride;
    copy16(tile + swizzled(row, chunk), inside ? rows + (first + row) * stride + k : rows, inside ? 16 : 0);
  }
}

#endif

template <HalfType H>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(const std::uint16_t* __restrict__ a, std::size_t rows_a, const std::uint16_t* __restrict__ b,
                 std::size_t rows_b, std::size_t b_first, std::size_t stride, std::size_t row0,
                 const float* __restrict__ state_s, const std::uint32_t* __restrict__ state_i, int width,
                 int bar_slot, const float* __restrict__ scale, float slack, float* cand_s, std::uint32_t* cand_i,
                 std::uint32_t* counts, std::uint32_t capacity) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const unsigned base = (static_cast<unsigned>(__cvta_generic_to_shared(smem_raw)) + 1023u) & ~1023u;
  const int slices = static_cast<int>(slices_of(stride));
  const unsigned ring = base;                            // kStages slices of B
  const unsigned tile_a = base + kStages * kSliceBytes;  // every slice of A
  const std::size_t a0 = static_cast<std::size_t>(blockIdx.x) * kTileA;
  const std::size_t tiles = (rows_b + kTileB - 1) / kTileB;
  const int mine = tiles > blockIdx.y ? static_cast<int>((tiles - blockIdx.y + gridDim.y - 1) / gridDim.y) : 0;
  const int steps = mine * slices;
  const std::size_t tile_step = static_cast<std::size_t>(gridDim.y) * kTileB;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, group = warp >> 2;

  __shared__ float bar_s[kTileA];
  __shared__ std::uint32_t bar_i[kTileA];
  for (int t = threadIdx.x; t < kTileA; t += kThreads) {
    const fused::Bar bar = fused::row_bar(state_s, state_i, width, bar_slot, row0, a0 + t, rows_a, scale, slack);
    bar_s[t] = bar.score;
    bar_i[t] = bar.index;
  }

  for (int s = 0; s < slices; ++s) copy_slice(tile_a + s * kSliceBytes, a, a0, rows_a, stride, s);
  // Steps are issued kStages - 2 ahead: the stage a step refills was last read two steps
  // earlier, whose MMAs every thread has waited for before the barrier of this step.
  constexpr int kAhead = kStages - 2;
  const std::size_t first_row = static_cast<std::size_t>(blockIdx.y) * kTileB;
  fused::SliceCursor<kStages> load(first_row), at(first_row);
  int issued = 0;
  const auto issue = [&] {
    if (issued++ < steps) copy_slice(ring + load.stage * kSliceBytes, b, load.row0, rows_b, stride, load.slice);
    copy_commit();
    load.advance(slices, tile_step);
  };
#pragma unroll
  for (int s = 0; s < kAhead; ++s) issue();

  __syncthreads();  // the bars are in shared memory
  float bar[16][2];  // this thread's A columns, 8 j + 2 (lane % 4) + c
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int c = 0; c < 2; ++c) bar[j][c] = bar_s[8 * j + 2 * (lane & 3) + c];
  float d[64];
#pragma unroll
  for (int e = 0; e < 64; ++e) d[e] = 0.0f;
  for (int step = 0; step < steps; ++step) {
    copy_wait<kAhead - 1>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the copies, seen by wgmma
    __syncthreads();
    issue();
    const std::uint64_t desc_b = descriptor(ring + at.stage * kSliceBytes + group * 64 * 128);
    const std::uint64_t desc_a = descriptor(tile_a + at.slice * kSliceBytes);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kSlice / 16; ++kk)  // 32 bytes of K a step: the descriptor's address + 2
      wgmma_128<H>(d, desc_b + 2 * kk, desc_a + 2 * kk, at.slice > 0 || kk > 0 ? 1 : 0);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    const std::size_t b0 = at.row0;
    const bool last = at.slice + 1 == slices;
    at.advance(slices, tile_step);
    if (!last) {
      // All but this step's MMAs are done: the stage the next barrier lets the copies
      // refill is free.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      continue;
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

    // d[4j + e]: B row 64 group + 16 (warp % 4) + lane / 4 + 8 (e / 2), A row
    // 8 j + 2 (lane % 4) + e % 2. Nearly always no score reaches a bar: one max per A
    // column shows that; only then, and only for those columns, the exact test, index
    // order and atomics. (Reading the accumulators while the next tile's MMAs run would
    // make ptxas serialize them.)
    const int row_in_tile = group * 64 + (warp & 3) * 16 + (lane >> 2);
    bool any = false;
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) any |= fmaxf(d[4 * j + c], d[4 * j + c + 2]) >= bar[j][c];
    if (any) {
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        if (fmaxf(d[4 * j], d[4 * j + 2]) < bar[j][0] && fmaxf(d[4 * j + 1], d[4 * j + 3]) < bar[j][1]) continue;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const std::size_t rb = b0 + row_in_tile + 8 * (e >> 1);
          const int col = 8 * j + 2 * (lane & 3) + (e & 1);
          const float v = d[4 * j + e];
          const auto index = static_cast<std::uint32_t>(b_first + rb);
          if (rb < rows_b && ranks_before(v, index, bar_s[col], bar_i[col]))
            fused::offer(v, index, a0 + col, counts, cand_s, cand_i, capacity);
        }
      }
    }
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  copy_wait<0>();
#endif
}

template <HalfType H>
void launch(const void* a, std::size_t rows_a, const void* b, std::size_t rows_b, std::size_t b_first,
            std::size_t stride, std::size_t row0, TopKState state, const Filter& filter,
            const gpu::CandidateLists& lists, cudaStream_t stream) {
  allow_dynamic_shared<wgmma_kernel<H>>(kMaxSmemBytes);  // what any row length needs
  const std::size_t smem = smem_bytes(stride);
  const dim3 grid = fused::stream_grid(rows_a, kTileA, rows_b, kTileB, sm_count());  // one block an SM
  wgmma_kernel<H><<<grid, kThreads, smem, stream>>>(
      static_cast<const std::uint16_t*>(a), rows_a, static_cast<const std::uint16_t*>(b), rows_b, b_first, stride,
      row0, state.scores, state.indices, state.width, lists.bar, filter.scale, filter.slack, lists.scores, lists.indices,
      lists.counts, static_cast<std::uint32_t>(lists.capacity));
  SIMKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool wgmma_available(std::size_t stride) {
  if (stride == 0 || smem_bytes(stride) > kMaxSmemBytes) return false;
  static const bool hopper = [] {
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    return major == 9 && minor == 0;
  }();
  return hopper;
}

void launch_wgmma(HalfType type, const void* a, std::size_t rows_a, const void* b, std::size_t rows_b,
                  std::size_t b_first, std::size_t stride, std::size_t row0, TopKState state, const Filter& filter,
                  const gpu::CandidateLists& lists, cudaStream_t stream) {
  if (type == HalfType::Fp16)
    launch<HalfType::Fp16>(a, rows_a, b, rows_b, b_first, stride, row0, state, filter, lists, stream);
  else
    launch<HalfType::Bf16>(a, rows_a, b, rows_b, b_first, stride, row0, state, filter, lists, stream);
}

}  // namespace simkit::cuda::detail
