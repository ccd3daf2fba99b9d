// Fused dot products and candidate filtering (see dot_candidates.hpp).
//
// A block keeps a tile of 128 rows of A in shared memory for its whole life and streams
// tiles of 128 rows of B past it (every gridDim.y-th tile of the launch), scoring each
// 128 x 128 tile with mma.sync m16n8k16 into fp32 accumulators. B arrives in slices of
// 32 elements of K through a ring of four stages (cp.async), one continuous pipeline
// across tiles, so the epilogue of one tile overlaps the loads of the next and no tile
// waits for a pipeline to fill. Shared rows are 64 bytes; their 16-byte chunks are
// swizzled so that ldmatrix and the asynchronous copies are free of bank conflicts.
// Each of the 8 warps owns 64 rows of B by 32 rows of A: 4 x 4 mma tiles, 64
// accumulators a thread.
//
// The epilogue compares each score with its A row's bar (the running top-k's last slot,
// read once per block: bars only change between launches) and appends the few that rank
// before it to the row's list with one atomic; nothing else of the tile is written.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "engine/cuda/dot_candidates.hpp"
#include "engine/cuda/dot_candidates_wgmma.hpp"
#include "engine/cuda/fused_device.cuh"
#include "core/text.hpp"
#include "simkit/error.hpp"

namespace simkit::cuda {

namespace {

constexpr int kTileB = 128;  // rows of B a block scores at a time
constexpr int kTileA = 128;  // rows of A a block keeps
constexpr int kSlice = 32;   // elements of K per stage (64 bytes a row)
constexpr int kStages = 4;
constexpr int kThreads = 256;
constexpr unsigned kStageBytes = kTileB * kSlice * 2;  // one slice of a tile (A or B)
static_assert(kTileA == kTileB, "slices of A and B share one size");
constexpr std::size_t kMaxSmemBytes = fused::kMaxSharedBytes;  // dynamic: no static shared memory

__host__ __device__ inline std::size_t slices_of(std::size_t stride) { return (stride + kSlice - 1) / kSlice; }
std::size_t smem_bytes(std::size_t stride) {
  return slices_of(stride) * kTileA * kSlice * 2 + kStages * kStageBytes;
}

// One m16n8k16 MMA (fp32 accumulators); the same for both half types but for their
// names (TYPE: "f16" or "bf16").
#define SIMKIT_MMA_16816(TYPE)                                                              \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 "               \
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                    \
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                             \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

template <HalfType H>
__device__ __forceinline__ void mma_16816(float* c, const std::uint32_t* a, const std::uint32_t* b) {
  if constexpr (H == HalfType::Fp16)
    SIMKIT_MMA_16816("f16");
  else
    SIMKIT_MMA_16816("bf16");
}
#undef SIMKIT_MMA_16816

// ldmatrix and cp.async take 32-bit shared-memory addresses; computing them once per
// thread keeps the integer pipes free for the loop's real work.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

using fused::copy16;
using fused::copy_commit;
using fused::copy_wait;

// Byte offset of element (row, 8 * chunk) in a 32-column tile: two rows share a 128-byte
// bank window, so chunk c of row r sits at c ^ ((r / 2) % 4) and the 8 rows an ldmatrix
// reads together hit 8 different bank groups.
__host__ __device__ constexpr unsigned swizzled(int row, int chunk) {
  return static_cast<unsigned>(row * kSlice + ((chunk ^ ((row >> 1) & 3)) << 3)) * 2u;
}
constexpr unsigned kTileBytes16 = 16 * kSlice * 2;  // 16 rows of a tile, in bytes

// The 16-byte chunks a thread copies for a tile of Rows rows: rows threadIdx/4 + 64 n.
template <int Rows>
struct SliceCopier {
  static constexpr int kPerThread = Rows * kSlice / 8 / kThreads;
  unsigned dst[kPerThread];  // offsets in the tile
  int row[kPerThread];
  int chunk;
  __device__ SliceCopier() : chunk(static_cast<int>(threadIdx.x) % 4) {
#pragma unroll
    for (int n = 0; n < kPerThread; ++n) {
      row[n] = static_cast<int>(threadIdx.x) / 4 + n * (kThreads / 4);
      dst[n] = swizzled(row[n], chunk);
    }
  }
  // Slice `slice` of rows [first, first + Rows) of `rows` (`count` rows) into the tile at `tile`.
  __device__ __forceinline__ void copy(unsigned tile, const std::uint16_t* rows, std::size_t first,
                                       std::size_t count, std::size_t stride, int slice) const {
    const std::size_t k = static_cast<std::size_t>(slice) * kSlice + chunk * 8;
#pragma unroll
    for (int n = 0; n < kPerThread; ++n) {
      const bool inside = first + row[n] < count && k < stride;
      copy16(tile + dst[n], inside ? rows + (first + row[n]) * stride + k : rows, inside ? 16 : 0);
    }
  }
};

template <HalfType H>
__global__ void __launch_bounds__(kThreads, 2)
    dot_candidates_kernel(const std::uint16_t* __restrict__ a, std::size_t rows_a,
                          const std::uint16_t* __restrict__ b, std::size_t rows_b, std::size_t b_first,
                          std::size_t stride, std::size_t row0, const float* __restrict__ state_s,
                          const std::uint32_t* __restrict__ state_i, int width, int bar_slot,
                          const float* __restrict__ scale, float slack, float* cand_s,
                          std::uint32_t* cand_i, std::uint32_t* counts, std::uint32_t capacity) {
  extern __shared__ __align__(128) std::uint16_t smem[];
  const int slices = static_cast<int>(slices_of(stride));
  const auto ring = static_cast<unsigned>(__cvta_generic_to_shared(smem));  // kStages slices of B
  const unsigned tile_a = ring + kStages * kStageBytes;                      // every slice of A
  const std::size_t a0 = static_cast<std::size_t>(blockIdx.x) * kTileA;
  const std::size_t tiles = (rows_b + kTileB - 1) / kTileB;
  const int mine = tiles > blockIdx.y ? static_cast<int>((tiles - blockIdx.y + gridDim.y - 1) / gridDim.y) : 0;
  const int steps = mine * slices;  // (tile, slice) pairs this block streams
  const std::size_t tile_step = static_cast<std::size_t>(gridDim.y) * kTileB;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warp_b = (warp & 1) * 64, warp_a = (warp >> 1) * 32;

  // Accumulator (i, j, e) holds B row warp_b + i*16 + (e/2)*8 + lane/4 against
  // A row warp_a + j*8 + (lane%4)*2 + e%2; the bars of those A rows.
  float bar_s[4][2];
  std::uint32_t bar_i[4][2];
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const fused::Bar bar = fused::row_bar(state_s, state_i, width, bar_slot, row0,
                                            a0 + warp_a + j * 8 + (lane & 3) * 2 + e, rows_a, scale, slack);
      bar_s[j][e] = bar.score;
      bar_i[j][e] = bar.index;
    }

  // Where this lane's ldmatrix rows start, for the two 16-wide K steps of a slice: the
  // x4 loads read rows +0..7 / +8..15 and chunks +0 / +1 in the order mma.sync wants.
  const int m = lane >> 3, r = lane & 7;
  unsigned frag_b[2], frag_a[2];
#pragma unroll
  for (int kk = 0; kk < 2; ++kk) {
    frag_b[kk] = swizzled(warp_b + (m & 1) * 8 + r, kk * 2 + (m >> 1));
    frag_a[kk] = swizzled(warp_a + (m >> 1) * 8 + r, kk * 2 + (m & 1));
  }

  // The A tile joins the first group of copies.
  const SliceCopier<kTileA> copy_a;
  const SliceCopier<kTileB> copy_b;
  for (int s = 0; s < slices; ++s) copy_a.copy(tile_a + s * kStageBytes, a, a0, rows_a, stride, s);
  // The copy side's position in the stream of steps.
  const std::size_t first_row = static_cast<std::size_t>(blockIdx.y) * kTileB;
  fused::SliceCursor<kStages> load(first_row);
  int issued = 0;
  const auto issue = [&] {
    if (issued < steps) copy_b.copy(ring + load.stage * kStageBytes, b, load.row0, rows_b, stride, load.slice);
    copy_commit();
    ++issued;
    load.advance(slices, tile_step);
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue();

  float acc[4][4][4];
  const auto clear = [&] {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  };
  clear();

  // The compute side's position as plain counters: a second SliceCursor here measured
  // 264 bytes of register spills at this kernel's 128-register cap.
  int slice = 0, stage = 0;
  std::size_t b0 = first_row;
  for (int step = 0; step < steps; ++step) {
    copy_wait<kStages - 2>();
    __syncthreads();  // this step's slice has landed; everyone is done with the stage refilled next
    issue();
    const unsigned tb = ring + stage * kStageBytes;
    const unsigned ta = tile_a + slice * kStageBytes;
    // Both K steps' fragments first, so the second's loads overlap the first's products.
    std::uint32_t fb[2][4][4], fa[2][4][2];
#pragma unroll
    for (int kk = 0; kk < kSlice / 16; ++kk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) ldmatrix_x4(fb[kk][i], tb + frag_b[kk] + i * kTileBytes16);
#pragma unroll
      for (int jp = 0; jp < 2; ++jp) {
        std::uint32_t x[4];
        ldmatrix_x4(x, ta + frag_a[kk] + jp * kTileBytes16);
        fa[kk][jp * 2][0] = x[0];
        fa[kk][jp * 2][1] = x[1];
        fa[kk][jp * 2 + 1][0] = x[2];
        fa[kk][jp * 2 + 1][1] = x[3];
      }
    }
#pragma unroll
    for (int kk = 0; kk < kSlice / 16; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma_16816<H>(acc[i][j], fb[kk][i], fa[kk][j]);
    stage = stage + 1 == kStages ? 0 : stage + 1;
    if (++slice < slices) continue;
    slice = 0;

    // The tile is complete. Nearly always no score reaches a bar: one max per A row
    // column shows that; only then the exact test, index order and atomics.
    bool any = false;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        float top = acc[0][j][c];
#pragma unroll
        for (int i = 0; i < 4; ++i) top = fmaxf(top, fmaxf(acc[i][j][c], acc[i][j][c + 2]));
        any |= top >= bar_s[j][c];
      }
    if (any) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const std::size_t rb = b0 + warp_b + i * 16 + (e >> 1) * 8 + (lane >> 2);
            const std::size_t ra = a0 + warp_a + j * 8 + (lane & 3) * 2 + (e & 1);
            const float v = acc[i][j][e];
            const auto index = static_cast<std::uint32_t>(b_first + rb);
            if (rb < rows_b && ranks_before(v, index, bar_s[j][e & 1], bar_i[j][e & 1]))
              fused::offer(v, index, ra, counts, cand_s, cand_i, capacity);
          }
    }
    clear();
    b0 += tile_step;
  }
  copy_wait<0>();  // no copy may outlive the block
}

__global__ void reset_counts_kernel(std::uint32_t* counts, std::size_t rows, std::uint32_t capacity,
                                    unsigned* overflow) {
  for (std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (counts[r] > capacity) *overflow = 1;
    counts[r] = 0;
  }
}

template <HalfType H>
void launch(const void* a, std::size_t rows_a, const void* b, std::size_t rows_b, std::size_t b_first,
            std::size_t stride, std::size_t row0, TopKState state, const Filter& filter,
            const gpu::CandidateLists& lists, cudaStream_t stream) {
  allow_dynamic_shared<dot_candidates_kernel<H>>(kMaxSmemBytes);  // what any row length needs
  const std::size_t smem = smem_bytes(stride);
  int per_sm = 0;
  SIMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dot_candidates_kernel<H>, kThreads, smem));
  const dim3 grid = fused::stream_grid(rows_a, kTileA, rows_b, kTileB,
                                       static_cast<std::size_t>(sm_count()) * std::max(per_sm, 1));
  dot_candidates_kernel<H><<<grid, kThreads, smem, stream>>>(
      static_cast<const std::uint16_t*>(a), rows_a, static_cast<const std::uint16_t*>(b), rows_b, b_first,
      stride, row0, state.scores, state.indices, state.width, lists.bar, filter.scale, filter.slack, lists.scores,
      lists.indices, lists.counts,
      static_cast<std::uint32_t>(lists.capacity));
  SIMKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool dot_candidates_supports(std::size_t stride) { return stride > 0 && smem_bytes(stride) <= kMaxSmemBytes; }

void dot_candidates(HalfType type, const void* a, std::size_t rows_a, const void* b, std::size_t rows_b,
                    std::size_t b_first, std::size_t stride, std::size_t row0, TopKState state,
                    const Filter& filter, const gpu::CandidateLists& lists, cudaStream_t stream) {
  if (rows_a == 0 || rows_b == 0) return;
  if (!dot_candidates_supports(stride))
    throw Failure(cat("internal: dot_candidates called with rows of ", stride, " elements"));
  if ((rows_a + kTileA - 1) / kTileA > 65535) throw Failure("internal: dot_candidates called with too many rows of A");
#ifdef SIMKIT_HAVE_WGMMA
  if (detail::wgmma_available(stride)) {
    detail::launch_wgmma(type, a, rows_a, b, rows_b, b_first, stride, row0, state, filter, lists, stream);
    return;
  }
#endif
  if (type == HalfType::Fp16)
    launch<HalfType::Fp16>(a, rows_a, b, rows_b, b_first, stride, row0, state, filter, lists, stream);
  else
    launch<HalfType::Bf16>(a, rows_a, b, rows_b, b_first, stride, row0, state, filter, lists, stream);
}

void merge_candidates(const gpu::CandidateLists& lists, std::size_t rows, std::size_t row0, TopKState state,
                      unsigned* overflow, cudaStream_t stream) {
  if (rows == 0) return;
  select_lists(lists.scores, lists.indices, lists.counts, lists.capacity, rows, row0, state, stream);
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((rows + 255) / 256, 1024));
  reset_counts_kernel<<<blocks, 256, 0, stream>>>(lists.counts, rows, static_cast<std::uint32_t>(lists.capacity),
                                                  overflow);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace simkit::cuda
