// simkit's tensor-core product for Hopper (sm_90a): C = A . B^T in TF32 on warpgroup MMA
// (wgmma), both operands K-major (rows of A and of B run along K), the epilogue a template
// argument like the CUDA-core kernel's (tiled_gemm.cuh).
//
// A block (two warpgroups, 256 threads) computes a 128 x BN tile of C. K is streamed in
// slices of 32 floats (128-byte rows, 128-byte swizzle, engine/cuda/wgmma.cuh) through a
// ring of `Stages` slices of A and B, filled by cp.async from all threads. Warpgroup g
// multiplies A rows 64 g.. of the tile by all BN rows of B with m64nBNk8 instructions,
// BN / 2 fp32 accumulators a thread. A slice is refilled two steps after the MMAs that
// read it were issued, once every thread has seen them complete (wgmma.wait_group 1
// before the next barrier). Blocks go through C in groups of 8 row tiles, so that the
// blocks running at once share rows of B in L2.
//
// TF32 reads the top 19 bits of each fp32 operand (sign, exponent, 10 fraction bits).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <cstdint>
#include <type_traits>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "core/cuda/check.hpp"
#include "engine/cuda/fused_device.cuh"
#include "engine/cuda/gemm_self_epilogue.cuh"
#include "engine/cuda/gemm_wgmma.hpp"
#include "core/cuda/memory.hpp"
#include "engine/cuda/tiled_gemm.cuh"
#include "engine/cuda/rank_order.cuh"
#include "engine/cuda/tma.cuh"
#include "engine/cuda/wgmma.cuh"
#include "core/text.hpp"
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"

namespace simkit::gemm::detail {

namespace {

constexpr int kTileM = 128;
constexpr int kWgThreads = 256;

// The TMA kernel's barriers after the ring: a stage loaded, a stage read (8 bytes each).
constexpr unsigned kBarrierBytes = 128;

template <int BN, int Stages>
constexpr std::size_t smem_bytes() {
  static_assert(Stages * 16 <= kBarrierBytes, "the barriers overflow their room");
  return std::size_t(Stages) * (kTileM + BN) * 128 + kBarrierBytes + 1024;  // + 1 KiB: 1024-byte alignment
}

// Candidates a row may offer in one tile before the top-k epilogue takes its slow path.
constexpr int kOffers = 16;

// The top-k kernel's shared memory beside the ring: each row's list (kTileM rows of
// `top`, best first), the column factors of the last kFactorTiles tiles, and each row's
// offers of the current tile (a count and up to kOffers entries).
struct TopKShared {
  float* keys;
  std::uint32_t* columns;
  float* factors;
  int* offer_count;
  float* offer_keys;
  std::uint32_t* offer_columns;
};

// Operand types of the tensor-core kernels (TF32 in floats, fp16 in half bits); a K slice
// is 128 bytes of each row either way, so the shared-memory layout and the descriptors are
// the same.
template <typename S>
struct Operand {
  using Storage = S;
  static constexpr bool kHalf = sizeof(S) == 2;
  static constexpr int kSlice = 128 / sizeof(S);  // elements a slice
};
using Tf32 = Operand<float>;
using Fp16 = Operand<std::uint16_t>;

// Bytes of shared memory before the TMA kernel's barriers: the ring, or the self-join's
// epilogue (laid over the ring once the block's MMAs are done) where that is more.
template <int BN, int Stages, typename Sink>
constexpr unsigned work_bytes() {
  constexpr unsigned ring = unsigned(Stages) * (kTileM + BN) * 128;
  if constexpr (Sink::kSelf)
    return ring > SelfLayout<kTileM, BN>::kBytes ? ring : SelfLayout<kTileM, BN>::kBytes;
  else
    return ring;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using cuda::fused::copy16;
using cuda::fused::copy_commit;
using cuda::fused::copy_wait;
using cuda::wgmma::descriptor;
using cuda::wgmma::swizzled;

// One MMA step of K (32 bytes of each row: k8 in TF32, k16 in fp16) into d.
template <typename Elem, int BN>
__device__ __forceinline__ void wgmma_step(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) {
  if constexpr (Elem::kHalf) {
    static_assert(BN == 256 || BN == 128, "fp16 tiles are 128 or 256 columns");
    if constexpr (BN == 128)
      SIMKIT_WGMMA(128, "k16.f32.f16.f16", ", 0, 0");
    else
      SIMKIT_WGMMA(256, "k16.f32.f16.f16", ", 0, 0");
  } else if constexpr (BN == 128) {
    SIMKIT_WGMMA(128, "k8.f32.tf32.tf32", "");
  } else if constexpr (BN == 192) {
    SIMKIT_WGMMA(192, "k8.f32.tf32.tf32", "");
  } else {
    SIMKIT_WGMMA(256, "k8.f32.tf32.tf32", "");
  }
}

// K slice `slice` of rows [first, first + ROWS) (of `count`, `k` floats each) into a tile;
// each row read from column `rotate` on, wrapping (a multiple of 4).
template <int ROWS>
__device__ __forceinline__ void copy_slice(unsigned tile, const float* rows, std::size_t first, std::size_t count,
                                           std::size_t k, int slice, std::size_t rotate) {
  const int chunk = threadIdx.x & 7;
  const std::size_t kk = static_cast<std::size_t>(slice) * Tf32::kSlice + chunk * 4;
  const std::size_t column = kk + rotate < k ? kk + rotate : kk + rotate - k;
#pragma unroll
  for (int n = 0; n < ROWS / 32; ++n) {
    const int row = static_cast<int>(threadIdx.x >> 3) + n * 32;
    const bool inside = first + row < count && kk < k;
    copy16(tile + swizzled(row, chunk), inside ? rows + (first + row) * k + column : rows, inside ? 16 : 0);
  }
}

// The top-k epilogue of one finished tile; d becomes the tile's keys. Each entry that
// ranks before its row's bar (the list's last entry) is offered to the row's buffer; the
// first lane of the quad holding the row (lane / 4) merges the offers into the list,
// alone, and the quad reads the new bar. After the first tiles few entries pass the bar.
// Rows with more offers than the buffer holds, and rows whose list is not full yet (a
// block's first tile, where every entry would pass), are selected by the whole quad in
// step: `top` rounds, each taking the best of the list's head and of the four lanes'
// best entries not yet taken, the new list assembled in the offers buffer (tops up to
// kOffers; larger tops offer the lanes' passing entries straight to the list, in turn).
// Lanes inserting on their own would diverge, and the warp would run its eight rows'
// insertions one after another. ra: this thread's two rows' factors; rb: the tile's
// column factors.
template <int BN, typename Score>
__device__ __forceinline__ void keep_top(float* d, const TopKSink<Score>& sink, int local0, std::size_t row0,
                                         std::size_t col0, std::size_t m, std::size_t n, const float (&ra)[2],
                                         const float* rb, const TopKShared& at, float (&bar_key)[2],
                                         std::uint32_t (&bar_column)[2]) {
  const int lane = threadIdx.x & 31, top = sink.top;
  // d[4 j + 2 h + e]: row local0 + 8 h, column 8 j + 2 (lane % 4) + e of the tile.
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      d[4 * j + i] = key_of<Score>(sink.score.combine(ra[i >> 1], rb[8 * j + 2 * (lane & 3) + (i & 1)], d[4 * j + i]));
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int local = local0 + 8 * h;
    const bool inside = row0 + local < m;
    // Calls visit(key, column) for this thread's entries of the row inside the product.
    const auto each_entry = [&](auto&& visit) {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const std::size_t col = col0 + 8 * j + 2 * (lane & 3) + e;
          if (col < n) visit(d[4 * j + 2 * h + e], static_cast<std::uint32_t>(col));
        }
    };
    const bool filling = inside && bar_column[h] == 0xffffffffu;
    bool offers = false;
    if (inside && !filling) {
      each_entry([&](float key, std::uint32_t col) {
        if (!cuda::ranks_before(key, col, bar_key[h], bar_column[h])) return;
        offers = true;
        const int slot = atomicAdd(at.offer_count + local, 1);
        if (slot < kOffers) {
          at.offer_keys[local * kOffers + slot] = key;
          at.offer_columns[local * kOffers + slot] = col;
        }
      });
    }
    if (!__any_sync(0xffffffffu, offers || filling)) continue;
    __syncwarp();
    float* row_keys = at.keys + local * top;
    std::uint32_t* row_columns = at.columns + local * top;
    // One entry into the row's list, if it ranks before the list's last.
    const auto offer_to_list = [&](float key, std::uint32_t col) {
      if (cuda::ranks_before(key, col, row_keys[top - 1], row_columns[top - 1]))
        cuda::insert_sorted(row_keys, row_columns, top, key, col);
    };
    const int count = filling ? kOffers + 1 : at.offer_count[local];
    if (count <= kOffers && (lane & 3) == 0)
      for (int s = 0; s < count; ++s)
        offer_to_list(at.offer_keys[local * kOffers + s], at.offer_columns[local * kOffers + s]);
    const bool crowded = inside && count > kOffers;
    if (top <= kOffers) {
      if (__any_sync(0xffffffffu, crowded)) {
        float* new_keys = at.offer_keys + local * kOffers;
        std::uint32_t* new_columns = at.offer_columns + local * kOffers;
        float last_key = cuda::empty_key();  // the last entry taken from the tile (none yet: taken = false)
        std::uint32_t last_column = 0xffffffffu;
        bool taken = false;
        int head = 0;  // the list's first entry not yet taken
        for (int r = 0; r < top; ++r) {
          float best_key = cuda::empty_key();
          std::uint32_t best_column = 0xffffffffu;
          each_entry([&](float key, std::uint32_t col) {
            const bool left = !taken || cuda::ranks_before(last_key, last_column, key, col);
            if (left && cuda::ranks_before(key, col, best_key, best_column)) {
              best_key = key;
              best_column = col;
            }
          });
#pragma unroll
          for (int offset = 1; offset < 4; offset <<= 1) {
            const float other_key = __shfl_xor_sync(0xffffffffu, best_key, offset);
            const std::uint32_t other_column = __shfl_xor_sync(0xffffffffu, best_column, offset);
            if (cuda::ranks_before(other_key, other_column, best_key, best_column)) {
              best_key = other_key;
              best_column = other_column;
            }
          }
          const float head_key = row_keys[head];
          const std::uint32_t head_column = row_columns[head];
          const bool from_list = !cuda::ranks_before(best_key, best_column, head_key, head_column);
          if (crowded && (lane & 3) == 0) {
            new_keys[r] = from_list ? head_key : best_key;
            new_columns[r] = from_list ? head_column : best_column;
          }
          if (from_list) {
            ++head;
          } else {
            last_key = best_key;
            last_column = best_column;
            taken = true;
          }
        }
        __syncwarp();
        if (crowded)
          for (int r = lane & 3; r < top; r += 4) {
            row_keys[r] = new_keys[r];
            row_columns[r] = new_columns[r];
          }
      }
    } else {
      // Larger tops: every lane's passing entries straight to the list, one lane at a time.
      for (int turn = 0; turn < 4; ++turn) {
        if (__any_sync(0xffffffffu, crowded && (lane & 3) == turn)) {
          if (crowded && (lane & 3) == turn) each_entry(offer_to_list);
        }
        __syncwarp();
      }
    }
    __syncwarp();
    if ((lane & 3) == 0) at.offer_count[local] = 0;
    if (inside) {
      bar_key[h] = row_keys[top - 1];
      bar_column[h] = row_columns[top - 1];
    }
  }
}

#endif

// Slices (of 32 floats of K) the promoted product sums on tensor cores before adding to
// fp32 registers: 128 elements, 16 MMAs of K 8.
constexpr int kPromoteSlices = 4;

// Column factors of the top-k kernel: a ring of this many tiles' worth (enough that the
// loader, at most Stages - 2 steps ahead, never overwrites a tile's before its epilogue).
constexpr int kFactorTiles = 4;

template <int BN, int Stages>
constexpr std::size_t shared_for(int top) {
  return smem_bytes<BN, Stages>() +
         (top > 0 ? std::size_t(kTileM) * top * 8 + kFactorTiles * BN * 4 + kTileM * (4 + kOffers * 8) : 0);
}

// Which row tile and column tiles a block takes. Blocks go in grouped raster order (Group
// row tiles, counted in units of Cluster row tiles of which each block of a cluster takes
// one, then the next column), so that the blocks running at once read a few row tiles of A
// and a few column tiles of B from L2. With shares > 0 (the top-k sink) the columns are
// shares: a block takes every shares-th column tile from its first; else one tile.
struct Place {
  std::size_t tile_m, first_n, step_n, tiles;
};

template <int Group, int Cluster>
__host__ __device__ constexpr std::size_t row_units(std::size_t m) {
  return ((m + kTileM - 1) / kTileM + Cluster - 1) / Cluster;
}

template <int BN, int Group, int Cluster>
__device__ __forceinline__ Place place_block(std::size_t m, std::size_t n, unsigned shares, unsigned rank) {
  static_assert(Group % Cluster == 0, "a raster group holds whole clusters");
  constexpr std::size_t kUnits = Group / Cluster;
  const std::size_t tiles_n = (n + BN - 1) / BN, units = row_units<Group, Cluster>(m);
  const std::size_t columns = shares > 0 ? shares : tiles_n, per_group = kUnits * columns;
  const std::size_t id = blockIdx.x / Cluster, first = id / per_group * kUnits;
  const std::size_t in_group = units - first < kUnits ? units - first : kUnits;
  Place place;
  place.tile_m = (first + id % per_group % in_group) * Cluster + rank;
  place.first_n = id % per_group / in_group;
  place.step_n = columns;
  place.tiles = place.first_n < tiles_n ? (tiles_n - place.first_n + columns - 1) / columns : 0;
  return place;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The top-k sink's state: the lists in shared memory at `at` (every one empty), and the
// bars (the k-th best so far) and factors of this thread's two rows.
template <int BN, typename Score>
struct TopKState {
  TopKShared lists{};
  float bar_key[2] = {cuda::empty_key(), cuda::empty_key()};
  std::uint32_t bar_column[2] = {0xffffffffu, 0xffffffffu};
  float ra[2] = {0.0f, 0.0f};

  __device__ TopKState(std::uint8_t* at, const TopKSink<Score>& sink, std::size_t row0, int local0, std::size_t m) {
    lists.keys = reinterpret_cast<float*>(at);
    lists.columns = reinterpret_cast<std::uint32_t*>(lists.keys + kTileM * sink.top);
    lists.factors = reinterpret_cast<float*>(lists.columns + kTileM * sink.top);
    lists.offer_count = reinterpret_cast<int*>(lists.factors + kFactorTiles * BN);
    lists.offer_keys = reinterpret_cast<float*>(lists.offer_count + kTileM);
    lists.offer_columns = reinterpret_cast<std::uint32_t*>(lists.offer_keys + kTileM * kOffers);
    for (int t = threadIdx.x; t < kTileM * sink.top; t += kWgThreads) {
      lists.keys[t] = bar_key[0];
      lists.columns[t] = bar_column[0];
    }
    for (int t = threadIdx.x; t < kTileM; t += kWgThreads) lists.offer_count[t] = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (row0 + local0 + 8 * h < m) ra[h] = factor_a(sink.score, row0 + local0 + 8 * h);
  }

  // Every row's list, as the share's list (after the last insertions).
  __device__ void write(const TopKSink<Score>& sink, std::size_t row0, std::size_t m, std::size_t share) const {
    __syncthreads();
    for (int t = threadIdx.x; t < kTileM * sink.top; t += kWgThreads) {
      const std::size_t row = row0 + t / sink.top;
      if (row >= m) break;
      const std::size_t at = row * sink.per_row + share * std::size_t(sink.top) + t % sink.top;
      sink.lists_key[at] = lists.keys[t];
      sink.lists_column[at] = lists.columns[t];
    }
  }
};

// No state for the elementwise sinks.
struct NoState {};
template <int BN, typename Sink>
using SinkState = std::conditional_t<Sink::kTopK, TopKState<BN, decltype(Sink::score)>, NoState>;

// A finished tile into the sink; d[4 j + e] holds row local0 + 8 (e / 2), column
// 8 j + 2 (lane % 4) + e % 2 of the tile; rb: the tile's column factors (top k).
template <int BN, typename Sink>
__device__ __forceinline__ void finish_tile(float* d, const Sink& sink, SinkState<BN, Sink>& state, int local0,
                                            std::size_t row0, std::size_t col0, std::size_t m, std::size_t n,
                                            const float* rb) {
  if constexpr (Sink::kTopK) {
    keep_top<BN>(d, sink, local0, row0, col0, m, n, state.ra, rb, state.lists, state.bar_key, state.bar_column);
  } else {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::size_t row = row0 + local0 + 8 * (e >> 1), col = col0 + 8 * j + 2 * (lane & 3) + (e & 1);
        if (row < m && col < n) sink(row, col, d[4 * j + e]);
      }
  }
}

// One stage's MMAs (128 bytes of K in four 32-byte steps) into d; accumulate 0 overwrites d.
template <typename Elem, int BN>
__device__ __forceinline__ void multiply_stage(float* d, unsigned stage, int group, bool accumulate) {
  constexpr unsigned kABytes = kTileM * 128;
  const std::uint64_t desc_a = descriptor(stage + group * 64 * 128);
  const std::uint64_t desc_b = descriptor(stage + kABytes);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma_step<Elem, BN>(d, desc_a + 2 * kk, desc_b + 2 * kk, accumulate || kk > 0);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

#endif

// A block multiplies one row tile of A by a sequence of column tiles of B, streaming
// (tile, K slice) steps through one ring so that the copies run on across tiles: all
// threads copy with cp.async, Stages - 2 steps ahead. With the top-k sink a block keeps
// its rows' top k in shared memory over its share of the column tiles.
template <int BN, int Stages, int Group, typename Sink, int Promote = 0>
__global__ void __launch_bounds__(kWgThreads, 1)
    wgmma_tf32_kernel(std::size_t m, std::size_t n, std::size_t k, const float* __restrict__ a,
                      std::size_t a_rotate, const float* __restrict__ b, Sink sink, unsigned shares) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
  const unsigned base = (raw + 1023u) & ~1023u;
  constexpr unsigned kABytes = kTileM * 128, kStageBytes = (kTileM + BN) * 128;
  const Place place = place_block<BN, Group, 1>(m, n, Sink::kTopK ? shares : 0, 0);
  const std::size_t row0 = place.tile_m * kTileM;
  const int slices = k > 0 ? static_cast<int>((k + Tf32::kSlice - 1) / Tf32::kSlice) : 1;  // k = 0: one slice of zeros
  const std::size_t steps = place.tiles * slices;  // (tile, slice) pairs, one a ring stage
  const int warp = threadIdx.x >> 5, group = warp >> 2;
  const int local0 = group * 64 + (warp & 3) * 16 + ((threadIdx.x & 31) >> 2);  // this thread's first row

  SinkState<BN, Sink> state = [&] {
    if constexpr (Sink::kTopK)
      return SinkState<BN, Sink>(smem_raw + (base - raw) + Stages * kStageBytes + kBarrierBytes, sink, row0, local0, m);
    else
      return NoState{};
  }();

  // The loader: step `loaded` is slice load_slice of column tile load_n (its load_tile-th).
  constexpr int kAhead = Stages - 2;
  std::size_t loaded = 0, load_n = place.first_n, load_tile = 0;
  int load_slice = 0;
  const auto issue = [&] {
    if (loaded < steps) {
      const unsigned stage = base + (loaded % Stages) * kStageBytes;
      copy_slice<kTileM>(stage, a, row0, m, k, load_slice, a_rotate);
      copy_slice<BN>(stage + kABytes, b, load_n * BN, n, k, load_slice, 0);
      if constexpr (Sink::kTopK) {
        if (load_slice == 0 && threadIdx.x < BN) {
          const std::size_t col = load_n * BN + threadIdx.x;
          state.lists.factors[(load_tile % kFactorTiles) * BN + threadIdx.x] =
              col < n ? factor_b(sink.score, col) : 0.0f;
        }
      }
    }
    ++loaded;
    copy_commit();
    if (++load_slice == slices) {
      load_slice = 0;
      load_n += place.step_n;
      ++load_tile;
    }
  };
#pragma unroll
  for (int s = 0; s < kAhead; ++s) issue();

  float d[BN / 2];
#pragma unroll
  for (int e = 0; e < BN / 2; ++e) d[e] = 0.0f;  // each tile's first MMA overwrites them
  // With Promote slices, d is added to fp32 registers every Promote slices: the tensor
  // cores' own sums truncate, and long chains of them drift (3xTF32 needs fp32's rounding).
  float total[Promote > 0 ? BN / 2 : 1];
  std::size_t step = 0;
  for (std::size_t tile = 0; tile < place.tiles; ++tile) {
    if constexpr (Promote > 0) {
#pragma unroll
      for (int e = 0; e < BN / 2; ++e) total[e] = 0.0f;
    }
    for (int slice = 0; slice < slices; ++slice, ++step) {
      copy_wait<kAhead - 1>();
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the copies, seen by wgmma
      __syncthreads();
      issue();
      const bool first = Promote > 0 ? slice % (Promote > 0 ? Promote : 1) == 0 : slice == 0;
      multiply_stage<Tf32, BN>(d, base + (step % Stages) * kStageBytes, group, !first);
      if constexpr (Promote > 0) {
        if ((slice + 1) % Promote == 0 || slice + 1 == slices) {
          asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
          for (int e = 0; e < BN / 2; ++e) total[e] += d[e];
          continue;
        }
      }
      // All but this step's MMAs are done: the stage the next barrier lets the copies refill is free.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    const float* rb = nullptr;
    if constexpr (Sink::kTopK) rb = state.lists.factors + (tile % kFactorTiles) * BN;
    finish_tile<BN>(Promote > 0 ? total : d, sink, state, local0, row0, (place.first_n + tile * place.step_n) * BN,
                    m, n, rb);
  }
  copy_wait<0>();
  if constexpr (Sink::kTopK) state.write(sink, row0, m, place.first_n);
#endif
}

// The same product with TMA: thread 0 loads each stage with the tensor memory accelerator
// (a slice of A's row tile, and of B's column tile) Stages - 1 steps ahead, on a
// transaction barrier that the warpgroups wait on; each warpgroup frees a stage on a
// second barrier once its MMAs that read it are done. In clusters of two blocks (two row
// tiles, the same column tiles) each block loads half of B's slice and multicasts it to
// both, so a stage is free only once all four warpgroups of the pair have read it. Rows
// past m or n and K past k arrive as zeros. A read rotated needs whole slices (rotation and
// k multiples of Elem::kSlice). Elem: the operands' type (Tf32 or Fp16). With the self-join
// sink a block takes one tile of the sink's band, and skips the product of a tile wholly
// on or below the diagonal (its lists come out empty).
template <typename Elem, int BN, int Stages, int Group, int Cluster, typename Sink>
__global__ void __launch_bounds__(kWgThreads, 1)
    wgmma_tma_kernel(std::size_t m, std::size_t n, std::size_t k, const __grid_constant__ CUtensorMap map_a,
                     std::size_t a_rotate, const __grid_constant__ CUtensorMap map_b, Sink sink, unsigned shares) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  namespace tma = cuda::tma;
  static_assert(!Sink::kSelf || Cluster == 1, "the self-join takes single blocks");
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
  const unsigned base = (raw + 1023u) & ~1023u;
  constexpr unsigned kABytes = kTileM * 128, kStageBytes = (kTileM + BN) * 128, kPartRows = BN / Cluster;
  const unsigned full = base + work_bytes<BN, Stages, Sink>(), empty = full + Stages * 8;
  const unsigned rank = Cluster > 1 ? tma::cluster_rank() : 0;
  Place place;
  if constexpr (Sink::kSelf) {
    place = place_block<BN, Group, 1>(sink.band.rows(), sink.band.columns(n), 0, 0);
    place.tile_m += sink.band.tile_lo;
    place.first_n += sink.band.col_tile_lo;
  } else {
    place = place_block<BN, Group, Cluster>(m, n, Sink::kTopK ? shares : 0, rank);
  }
  const std::size_t row0 = place.tile_m * kTileM;
  // Self-join: a pair i < j in the tile, or nothing to multiply.
  const bool pairs = !Sink::kSelf || row0 + 1 < std::min(place.first_n * BN + BN, n);
  const std::size_t slices = pairs ? (k + Elem::kSlice - 1) / Elem::kSlice : 0;
  const std::size_t steps = place.tiles * slices;
  const int warp = threadIdx.x >> 5, group = warp >> 2;
  const int local0 = group * 64 + (warp & 3) * 16 + ((threadIdx.x & 31) >> 2);

  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) {
      tma::barrier_init(full + 8 * s, 1);
      tma::barrier_init(empty + 8 * s, 2 * Cluster);  // a warpgroup of each block of the cluster
    }
    tma::barrier_init_fence();
  }
  SinkState<BN, Sink> state = [&] {
    if constexpr (Sink::kTopK)
      return SinkState<BN, Sink>(smem_raw + (base - raw) + Stages * kStageBytes + kBarrierBytes, sink, row0, local0, m);
    else
      return NoState{};
  }();
  if constexpr (Cluster > 1)
    tma::cluster_sync();
  else
    __syncthreads();

  // Step t (slice t % slices of the block's (t / slices)-th column tile) into stage
  // t % Stages, once the stage's step t - Stages is read everywhere.
  const auto issue = [&](std::size_t t) {
    const unsigned s = static_cast<unsigned>(t % Stages), stage = base + s * kStageBytes;
    if (t >= Stages) tma::wait(empty + 8 * s, static_cast<unsigned>(t / Stages - 1) & 1u);
    const std::size_t kk = t % slices * Elem::kSlice, col0 = (place.first_n + t / slices * place.step_n) * BN;
    const std::size_t ka = kk + a_rotate < k ? kk + a_rotate : kk + a_rotate - k;
    tma::arrive_expecting(full + 8 * s, kStageBytes);
    tma::load(stage, &map_a, static_cast<int>(ka), static_cast<int>(row0), full + 8 * s);
    const unsigned part = stage + kABytes + rank * kPartRows * 128;
    const int y = static_cast<int>(col0 + rank * kPartRows);
    if constexpr (Cluster > 1)
      tma::load_multicast(part, &map_b, static_cast<int>(kk), y, full + 8 * s, (1u << Cluster) - 1);
    else
      tma::load(part, &map_b, static_cast<int>(kk), y, full + 8 * s);
  };
  const auto release = [&](std::size_t t) {
    const unsigned bar = empty + 8 * static_cast<unsigned>(t % Stages);
    if constexpr (Cluster > 1) {
      for (unsigned c = 0; c < Cluster; ++c) tma::arrive_at(bar, c);
    } else {
      tma::arrive(bar);
    }
  };
  if (threadIdx.x == 0)
    for (std::size_t t = 0; t + 1 < Stages && t < steps; ++t) issue(t);

  float d[BN / 2];
#pragma unroll
  for (int e = 0; e < BN / 2; ++e) d[e] = 0.0f;
  float factor = 0.0f;  // top k: the factor of column threadIdx.x of the current tile
  std::size_t step = 0;
  for (std::size_t tile = 0; tile < place.tiles; ++tile) {
    const std::size_t col0 = (place.first_n + tile * place.step_n) * BN;
    if constexpr (Sink::kTopK) factor = threadIdx.x < BN && col0 + threadIdx.x < n ? factor_b(sink.score, col0 + threadIdx.x) : 0.0f;
    for (std::size_t slice = 0; slice < slices; ++slice, ++step) {
      const unsigned s = static_cast<unsigned>(step % Stages);
      tma::wait(full + 8 * s, static_cast<unsigned>(step / Stages) & 1u);
      multiply_stage<Elem, BN>(d, base + s * kStageBytes, group, slice > 0);
      // All but this step's MMAs are done: the stage of the step before is free here.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      if (step > 0 && (threadIdx.x & 127) == 0) release(step - 1);
      if (threadIdx.x == 0 && step + Stages - 1 < steps) issue(step + Stages - 1);
      __syncwarp();  // the warp whole again for the next .aligned MMAs
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    if constexpr (Sink::kSelf) {
      self_finish<kTileM, BN>(d, sink, smem_raw + (base - raw), local0, row0, col0);
    } else {
      float* rb = nullptr;
      if constexpr (Sink::kTopK) {
        rb = state.lists.factors + (tile % kFactorTiles) * BN;
        if (threadIdx.x < BN) rb[threadIdx.x] = factor;
        __syncthreads();
      }
      finish_tile<BN>(d, sink, state, local0, row0, col0, m, n, rb);
    }
  }
  if constexpr (Sink::kTopK) state.write(sink, row0, m, place.first_n);
  if constexpr (Cluster > 1) tma::cluster_sync();  // no block leaves while its pair may still signal it
#endif
}

// Allows the kernel the shared memory of the largest top its tile takes, and returns what
// this sink needs.
template <auto Kernel, int BN, int Stages, typename Sink>
std::size_t shared_for_sink(const Sink& sink) {
  if constexpr (Sink::kSelf) {
    constexpr std::size_t bytes = work_bytes<BN, Stages, Sink>() + kBarrierBytes + 1024;
    static_assert(bytes <= cuda::fused::kMaxSharedBytes, "the self-join's epilogue does not fit");
    cuda::allow_dynamic_shared<Kernel>(bytes);
    return bytes;
  }
  int top = 0;
  if constexpr (Sink::kTopK) top = sink.top;
  cuda::allow_dynamic_shared<Kernel>(
      std::min(shared_for<BN, Stages>(Sink::kTopK ? kMaxFusedTop : 0), cuda::fused::kMaxSharedBytes));
  const std::size_t shared = shared_for<BN, Stages>(top);
  if (shared > cuda::fused::kMaxSharedBytes) throw Failure(cat("internal: top ", top, " does not fit the TF32 tile"));
  return shared;
}

// Blocks of a launch: Cluster per unit of row tiles, times the column tiles or the shares
// (the self-join: its band's rows against the columns from the band's first column tile).
template <int BN, int Group, int Cluster, typename Sink>
unsigned blocks_for(std::size_t m, std::size_t n, unsigned shares, const Sink& sink) {
  if constexpr (Sink::kSelf) {
    m = sink.band.rows();
    n = sink.band.columns(n);
  }
  const std::size_t columns = Sink::kTopK ? shares : (n + BN - 1) / BN;
  const std::size_t blocks = row_units<Group, Cluster>(m) * Cluster * columns;
  if (blocks > 0x7fffffff || m > 0x7fffffff || n > 0x7fffffff)
    throw UsageError(cat("a product of ", m, " x ", n, " is too large for the TF32 kernel"));
  return static_cast<unsigned>(blocks);
}

template <int BN, int Stages, int Group, typename Sink, int Promote = 0>
void launch_tf32(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t a_rotate, const float* b,
                 Sink sink, cudaStream_t stream, unsigned shares = 1) {
  static_assert(!(Sink::kTopK && Promote > 0), "the top-k epilogue reads the tensor cores' sums");
  constexpr auto kernel = wgmma_tf32_kernel<BN, Stages, Group, Sink, Promote>;
  const std::size_t shared = shared_for_sink<kernel, BN, Stages>(sink);
  const unsigned blocks = blocks_for<BN, Group, 1, Sink>(m, n, shares, sink);
  if (blocks == 0) return;
  kernel<<<blocks, kWgThreads, shared, stream>>>(m, n, k, a, a_rotate, b, sink, shares);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

// A tensor map over `count` rows of k elements (row-major, 16-byte aligned rows), in boxes
// of one slice (128 bytes, 128-byte swizzle) by box_rows rows.
template <typename Elem>
CUtensorMap slice_map(const void* rows, std::size_t count, std::size_t k, unsigned box_rows) {
  static const auto encode =
      reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(cuda::driver_function("cuTensorMapEncodeTiled", 12000));
  CUtensorMap map{};
  const cuuint64_t dims[2] = {k, count};
  const cuuint64_t strides[1] = {k * sizeof(typename Elem::Storage)};
  const cuuint32_t box[2] = {Elem::kSlice, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapDataType type = Elem::kHalf ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const CUresult result = encode(&map, type, 2, const_cast<void*>(rows), dims, strides,
                                 box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw Failure(cat("internal: cuTensorMapEncodeTiled failed (error ", int(result), ") for ", count, " rows of ", k));
  return map;
}

// Whether the TMA kernel takes the product: K to read (the cp.async kernel writes the
// zeros of k = 0), rows of whole 16-byte pieces, and a rotation in whole slices.
template <typename Elem>
bool tma_takes(std::size_t k, std::size_t a_rotate) {
  return k > 0 && k <= 0x7fffffff && k * sizeof(typename Elem::Storage) % 16 == 0 &&
         (a_rotate == 0 || (a_rotate % Elem::kSlice == 0 && k % Elem::kSlice == 0));
}

// k = 0 (the self-join only: the TF32 products send it to the cp.async kernel) loads
// nothing, and its maps stay unmade.
template <typename Elem, int BN, int Stages, int Group, int Cluster, typename Sink>
void launch_tma(std::size_t m, std::size_t n, std::size_t k, const void* a, std::size_t a_rotate, const void* b,
                Sink sink, cudaStream_t stream, unsigned shares = 1) {
  constexpr auto kernel = wgmma_tma_kernel<Elem, BN, Stages, Group, Cluster, Sink>;
  const std::size_t shared = shared_for_sink<kernel, BN, Stages>(sink);
  const unsigned blocks = blocks_for<BN, Group, Cluster, Sink>(m, n, shares, sink);
  if (blocks == 0) return;
  const CUtensorMap map_a = k > 0 ? slice_map<Elem>(a, m, k, kTileM) : CUtensorMap{};
  const CUtensorMap map_b = k > 0 ? slice_map<Elem>(b, n, k, BN / Cluster) : CUtensorMap{};
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = Cluster;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kWgThreads);
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  SIMKIT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, m, n, k, map_a, a_rotate, map_b, sink, shares));
}

// The product through the loader `tma` names (TensorTile::tma), the cp.async one where TMA
// cannot take it.
template <int BN, int Stages, int Group, typename Sink>
void launch(int tma, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t a_rotate,
            const float* b, Sink sink, cudaStream_t stream, unsigned shares = 1) {
  // A pair needs two row tiles (with one the second block would only multiply zeros).
  if (tma == 2 && m <= kTileM) tma = 1;
  if (tma == 2 && tma_takes<Tf32>(k, a_rotate))
    return launch_tma<Tf32, BN, Stages, Group, 2>(m, n, k, a, a_rotate, b, sink, stream, shares);
  if (tma == 1 && tma_takes<Tf32>(k, a_rotate))
    return launch_tma<Tf32, BN, Stages, Group, 1>(m, n, k, a, a_rotate, b, sink, stream, shares);
  launch_tf32<BN, Stages, Group>(m, n, k, a, a_rotate, b, sink, stream, shares);
}

static_assert(shared_for<256, 4>(10) <= cuda::fused::kMaxSharedBytes, "top 10 overflows the 256-column tile");
static_assert(shared_for<128, 5>(kMaxFusedTop) <= cuda::fused::kMaxSharedBytes, "top-k tile 128 overflows");

// The top-k kernel's column tile: 256 (fewer tiles, the faster product) while the lists
// of `top` fit beside its ring, else 128; SIMKIT_FUSED_TILE=128 or 256 forces one (for
// measurement).
int top_k_tile_n(int top) {
  if (const char* forced = std::getenv("SIMKIT_FUSED_TILE")) {
    const std::string value(forced);
    if (value == "128") return 128;
    if (value == "256" && shared_for<256, 4>(top) <= cuda::fused::kMaxSharedBytes) return 256;
  }
  return shared_for<256, 4>(top) <= cuda::fused::kMaxSharedBytes ? 256 : 128;
}

// The loader of the fused jobs: TMA in single blocks (the fastest: bench/results/gemm.md)
// unless SIMKIT_GEMM_TMA says 0 (cp.async) or 2 (TMA multicast in pairs), for measurement.
int fused_tma() {
  const char* forced = std::getenv("SIMKIT_GEMM_TMA");
  return forced == nullptr ? 1 : std::clamp(std::atoi(forced), 0, 2);
}

}  // namespace

const std::vector<TensorTile>& tensor_tiles_impl() {
  static const std::vector<TensorTile> all{{128, 256, 4, 8, 0}, {128, 256, 4, 8, 1}, {128, 256, 4, 8, 2},
                                           {128, 192, 5, 8, 1}, {128, 128, 6, 8, 0}, {128, 128, 6, 8, 1},
                                           {128, 256, 4, 8, 1, true}};
  return all;
}

void multiply_tf32_impl(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a,
                        const float* b, float* c, cudaStream_t stream) {
  const auto is = [&](int bn, int stages, int group) {
    return !tile.fp16 && tile.bm == kTileM && tile.bn == bn && tile.stages == stages && tile.group == group &&
           tile.tma >= 0 && tile.tma <= 2;
  };
  const Store store{{}, c, n};
  if (is(256, 4, 8)) return launch<256, 4, 8>(tile.tma, m, n, k, a, 0, b, store, stream);
  if (is(192, 5, 8)) return launch<192, 5, 8>(tile.tma, m, n, k, a, 0, b, store, stream);
  if (is(128, 6, 8)) return launch<128, 6, 8>(tile.tma, m, n, k, a, 0, b, store, stream);
  throw UsageError("no TF32 kernel for tile " + tile.name());
}

void multiply_tf32_promoted(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                            cudaStream_t stream) {
  launch_tf32<128, 6, 8, Store, kPromoteSlices>(m, n, k, a, 0, b, Store{{}, c, n}, stream);
}

void multiply_fp16_impl(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const std::uint16_t* a,
                        const std::uint16_t* b, float* c, cudaStream_t stream) {
  if (!tile.fp16 || tile.bm != kTileM || tile.bn != 256 || tile.stages != 4 || tile.group != 8 || tile.tma != 1)
    throw UsageError("no fp16 kernel for tile " + tile.name());
  launch_tma<Fp16, 256, 4, 8, 1>(m, n, k, a, 0, b, Store{{}, c, n}, stream);
}

void self_lists(const ScoreSpec& spec, bool fp16, std::size_t n, std::size_t k, const void* rows, int top,
                const SelfBand& band, cudaStream_t stream) {
  static_assert(kSelfTileM == kTileM && kSelfTileN == 256, "the band's tiles are the kernel's");
  with_score(spec, [&](auto score) {
    using S = decltype(score);
    const SelfTopKSink<S> sink{score, top, n, band};
    if (fp16)
      launch_tma<Fp16, kSelfTileN, 4, 8, 1>(n, n, k, rows, spec.rotate_a, rows, sink, stream, 0);
    else
      launch_tma<Tf32, kSelfTileN, 4, 8, 1>(n, n, k, rows, spec.rotate_a, rows, sink, stream, 0);
  });
}

void threshold_tf32_impl(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                         const float* b, float threshold, ScoredPair* hits, unsigned long long* count,
                         std::size_t capacity, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  with_score(spec, [&](auto score) {
    using S = decltype(score);
    launch<256, 4, 8>(fused_tma(), m, n, k, a, spec.rotate_a, b,
                      ThresholdSink<S>{score, key_of<S>(threshold), hits, count, capacity}, stream);
  });
}

unsigned top_k_groups(std::size_t m, std::size_t n, std::size_t k, int top) {
  // Long rows (k >= 2048): one share a column tile, every block one tile as in the plain
  // product, while the lists fit a quarter of the free memory (measured at k = 20,000:
  // 1.94 s against 2.76 s streamed). Short rows: as many shares as the row tiles of a
  // raster group can have in one wave, each block streaming its tiles, so that its bars
  // rise and few entries reach the lists (at k = 300 a tile a block took 12x longer).
  // SIMKIT_FUSED_SHARES forces a count (for measurement and tests).
  const std::size_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + top_k_tile_n(top) - 1) / top_k_tile_n(top);
  const std::size_t rows = std::clamp<std::size_t>(tiles_m, 1, 8);
  std::size_t shares = cuda::sm_count() / rows;
  std::size_t free = 0, total = 0;
  if (k >= 2048 && cudaMemGetInfo(&free, &total) == cudaSuccess && m * tiles_n * std::size_t(top) * 8 <= free / 4)
    shares = tiles_n;
  if (const char* forced = std::getenv("SIMKIT_FUSED_SHARES")) shares = std::strtoull(forced, nullptr, 10);
  return static_cast<unsigned>(std::clamp<std::size_t>(shares, 1, std::clamp<std::size_t>(tiles_n, 1, 65535)));
}

void top_k_lists_tf32(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                      const float* b, int top, unsigned shares, float* lists_key, std::uint32_t* lists_column,
                      cudaStream_t stream) {
  if (m == 0) return;
  with_score(spec, [&](auto score) {
    using S = decltype(score);
    const TopKSink<S> sink{score, top, lists_key, lists_column, std::size_t(shares) * top};
    if (top_k_tile_n(top) == 256)
      launch<256, 4, 8>(fused_tma(), m, n, k, a, spec.rotate_a, b, sink, stream, shares);
    else
      launch<128, 5, 8>(fused_tma(), m, n, k, a, spec.rotate_a, b, sink, stream, shares);
  });
}

}  // namespace simkit::gemm::detail
