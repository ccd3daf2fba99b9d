// Top-k selection and threshold collection on the GPU.
//
// Order: higher score first, equal scores by lower index (as simkit::ranks_before), so
// the kept set never depends on how rows are cut into segments or threads.
//
// A block gathers the entries of a row segment that can still enter the top k into a
// shared-memory buffer, filtered by the row's running k-th best and by a block threshold
// found cheaply from the threads' best entries; the few survivors are sorted at the end.
// Long rows are cut into segments whose partial lists a second pass merges with the
// running state.
#include <algorithm>
#include <cstdint>

#include "core/text.hpp"

#include "core/cuda/check.hpp"
#include "engine/cuda/rank_order.cuh"
#include "engine/cuda/select.hpp"
#include "simkit/error.hpp"
#include "simkit/topk.hpp"

namespace simkit::cuda {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr std::uint32_t kNone = 0xffffffffu;


// Entries of one row: a dense tile row or a list of (score, index) candidates.
struct DenseRows {
  static constexpr bool kDense = true;
  const float* tile;
  std::size_t ld;
  std::size_t row0;
  std::size_t col0;
  detail::BlockMask mask;
  __device__ bool fetch(std::size_t r, std::size_t c, float& s, std::uint32_t& i) const {
    s = tile[r * ld + c];
    i = static_cast<std::uint32_t>(col0 + c);
    return mask.keeps(row0 + r, col0 + c);
  }
};

// Lists of per_row entries; with counts, only the first counts[r] of row r are filled.
struct ListRows {
  static constexpr bool kDense = false;
  const float* scores;
  const std::uint32_t* indices;
  std::size_t per_row;
  const std::uint32_t* counts = nullptr;
  __device__ bool fetch(std::size_t r, std::size_t c, float& s, std::uint32_t& i) const {
    if (counts != nullptr && c >= counts[r]) return false;
    s = scores[r * per_row + c];
    i = indices[r * per_row + c];
    return true;
  }
};

constexpr int next_pow2(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

// Sorts n (a power of two) entries of shared memory best first; all threads call it.
__device__ void bitonic_sort(float* s, std::uint32_t* idx, int n) {
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const int j = i ^ stride;
        if (j <= i) continue;
        const bool best_first = (i & size) == 0;
        const bool j_first = ranks_before(s[j], idx[j], s[i], idx[i]);
        if (j_first == best_first) {
          const float ts = s[i];
          const std::uint32_t ti = idx[i];
          s[i] = s[j];
          idx[i] = idx[j];
          s[j] = ts;
          idx[j] = ti;
        }
      }
      __syncthreads();
    }
  }
}

// Each thread reads this many entries of a segment per round, all loads in flight at once.
constexpr int kPerThread = 16;
constexpr std::size_t kRound = static_cast<std::size_t>(kThreads) * kPerThread;

// One block per (row, segment); rows of the state are row0 + r.
//
// Entries that rank before the bar (the row's running K-th best) and at or before the
// block threshold gather in a shared buffer. The threshold starts at the bar; in the
// first round with candidates each warp finds its ceil(K/8)-th best thread-best, and
// the worst of those eight leaves at least K entries at or before it, so nothing after
// it can be in the block's top K. A buffer about to overflow is sorted and cut to K
// (raising the threshold) and the round's entries, still in registers, are offered
// again. A block with no candidate exits at once; the sort at the end is over the few
// entries that remain.
template <int K, typename Rows>
__global__ void __launch_bounds__(kThreads, 4)
    select_block(Rows rows, std::size_t n, int segments, std::size_t seg_len, std::size_t row0,
                 float* state_s, std::uint32_t* state_i, float* part_s, std::uint32_t* part_i) {
  constexpr int kCap = next_pow2(2 * K > 1024 ? 2 * K : 1024);
  constexpr int kQuantile = (K + kWarps - 1) / kWarps;  // per-warp rank of the threshold
  __shared__ float buf_s[kCap];
  __shared__ std::uint32_t buf_i[kCap];
  __shared__ float warp_s[kWarps];
  __shared__ std::uint32_t warp_i[kWarps];
  __shared__ int count;
  __shared__ int overflow;

  const std::size_t r = blockIdx.x / segments;
  const int seg = static_cast<int>(blockIdx.x % segments);
  const std::size_t row = row0 + r;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const float bar_s = state_s[row * K + K - 1];
  const std::uint32_t bar_i = state_i[row * K + K - 1];
  float th_s = bar_s;  // entries must rank before the bar and at or before (th_s, th_i)
  std::uint32_t th_i = bar_i;
  bool have_threshold = false;
  bool changed = false;  // block-uniform: candidates were added

  const int base_count = segments == 1 ? K : 0;  // the state joins when it is replaced
  if (threadIdx.x == 0) {
    count = base_count;
    overflow = 0;
  }
  if (segments == 1)
    for (int e = threadIdx.x; e < K; e += kThreads) {
      buf_s[e] = state_s[row * K + e];
      buf_i[e] = state_i[row * K + e];
    }
  __syncthreads();

  const std::size_t c_begin = static_cast<std::size_t>(seg) * seg_len;
  const std::size_t c_end = c_begin + seg_len < n ? c_begin + seg_len : n;
  const auto compact = [&]() {
    const int used = count < kCap ? count : kCap;
    for (int e = used + threadIdx.x; e < kCap; e += kThreads) {
      buf_s[e] = empty_key();
      buf_i[e] = kNone;
    }
    __syncthreads();
    bitonic_sort(buf_s, buf_i, kCap);
    if (threadIdx.x == 0) {
      count = K;
      overflow = 0;
    }
    th_s = buf_s[K - 1];
    th_i = buf_i[K - 1];
    have_threshold = true;
    __syncthreads();
  };

  // Whether this block's part of a dense row starts on a 16-byte boundary (float4 loads).
  bool aligned = false;
  if constexpr (Rows::kDense)
    aligned = (reinterpret_cast<std::uintptr_t>(rows.tile + r * rows.ld + c_begin) & 15u) == 0;

  for (std::size_t base = c_begin; base < c_end; base += kRound) {
    if constexpr (Rows::kDense) {
      // Cheap pass first: once the bar is high, most rounds hold nothing at or above it,
      // and a plain max over the raw scores shows that without the index, mask and tie
      // logic below. (Masked entries and ties by index are left to the full pass.)
      const float* p = rows.tile + r * rows.ld;
      bool any = false;
      if (aligned && base + kRound <= c_end) {
        const float4* p4 = reinterpret_cast<const float4*>(p + base);
#pragma unroll
        for (int j = 0; j < kPerThread / 4; ++j) {
          const float4 x = p4[j * kThreads + threadIdx.x];
          any |= fmaxf(fmaxf(x.x, x.y), fmaxf(x.z, x.w)) >= bar_s;
        }
      } else {
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
          const std::size_t c = base + static_cast<std::size_t>(j) * kThreads + threadIdx.x;
          if (c < c_end) any |= p[c] >= bar_s;
        }
      }
      if (!__syncthreads_or(any)) continue;
    }
    float v[kPerThread];
    std::uint32_t id[kPerThread];
    bool keep[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const std::size_t c = base + static_cast<std::size_t>(j) * kThreads + threadIdx.x;
      keep[j] = c < c_end && rows.fetch(r, c, v[j], id[j]) && ranks_before(v[j], id[j], bar_s, bar_i);
    }
    float best_s = empty_key();
    std::uint32_t best_i = kNone;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j)
      if (keep[j] && ranks_before(v[j], id[j], best_s, best_i)) {
        best_s = v[j];
        best_i = id[j];
      }
    if (!__syncthreads_or(best_i != kNone)) continue;  // nothing here beats the bar
    changed = true;

    if (!have_threshold) {
      // The warp's kQuantile-th best thread-best, by repeated arg-max over the lanes.
      float ws = best_s;
      std::uint32_t wi = best_i;
      float qs = empty_key();
      std::uint32_t qi = kNone;
      for (int round = 0; round < kQuantile && round < 32; ++round) {
        float ms = ws;
        std::uint32_t mi = wi;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
          const float os = __shfl_xor_sync(kFullMask, ms, offset);
          const std::uint32_t oi = __shfl_xor_sync(kFullMask, mi, offset);
          if (ranks_before(os, oi, ms, mi)) {
            ms = os;
            mi = oi;
          }
        }
        qs = ms;
        qi = mi;
        if (wi == mi) {
          ws = empty_key();
          wi = kNone;
        }
      }
      if (lane == 0) {
        warp_s[warp] = kQuantile <= 32 ? qs : empty_key();
        warp_i[warp] = kQuantile <= 32 ? qi : kNone;
      }
      __syncthreads();
      // The worst of the warps' quantiles; an empty one means fewer than K candidates.
      float ts = warp_s[0];
      std::uint32_t ti = warp_i[0];
      for (int w = 1; w < kWarps; ++w)
        if (ranks_before(ts, ti, warp_s[w], warp_i[w])) {
          ts = warp_s[w];
          ti = warp_i[w];
        }
      if (ti != kNone) {
        th_s = ts;
        th_i = ti;
        have_threshold = true;
      }
    }

    // Offer the round; on overflow keep the best K so far and offer what did not fit.
    bool added[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) added[j] = false;
    for (;;) {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        if (!keep[j] || added[j] || ranks_before(th_s, th_i, v[j], id[j])) continue;
        const int at = atomicAdd(&count, 1);
        if (at < kCap) {
          buf_s[at] = v[j];
          buf_i[at] = id[j];
          added[j] = true;
        } else {
          overflow = 1;
        }
      }
      __syncthreads();
      if (!overflow) break;
      compact();
    }
  }

  if (segments == 1 && !changed) return;  // nothing beat the bar: the state stays
  if (!changed) {
    for (int e = threadIdx.x; e < K; e += kThreads) {
      part_s[(r * segments + seg) * K + e] = empty_key();
      part_i[(r * segments + seg) * K + e] = kNone;
    }
    return;
  }
  // The remaining entries, sorted: few unless ties or a hard row made the buffer fill.
  const int used = count < kCap ? count : kCap;
  const int size = next_pow2(used > K ? used : K);
  for (int e = used + threadIdx.x; e < size; e += kThreads) {
    buf_s[e] = empty_key();
    buf_i[e] = kNone;
  }
  __syncthreads();
  bitonic_sort(buf_s, buf_i, size);
  for (int e = threadIdx.x; e < K; e += kThreads) {
    if (segments == 1) {
      state_s[row * K + e] = buf_s[e];
      state_i[row * K + e] = buf_i[e];
    } else {
      const std::size_t at = (r * segments + seg) * K + e;
      part_s[at] = buf_s[e];
      part_i[at] = buf_i[e];
    }
  }
}

template <int K, typename Rows>
void launch_select(Rows rows, std::size_t n_rows, std::size_t n, int segments,
                   std::size_t seg_len, std::size_t row0, TopKState state, float* part_s,
                   std::uint32_t* part_i, cudaStream_t stream) {
  const std::size_t blocks = n_rows * static_cast<std::size_t>(segments);
  if (blocks == 0) return;
  select_block<K, Rows><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      rows, n, segments, seg_len, row0, state.scores, state.indices, part_s, part_i);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

template <typename Rows>
void dispatch_select(int width, Rows rows, std::size_t n_rows, std::size_t n, int segments,
                     std::size_t seg_len, std::size_t row0, TopKState state, float* part_s,
                     std::uint32_t* part_i, cudaStream_t stream) {
  switch (width) {
#define SIMKIT_SELECT_CASE(K)                                                                \
  case K:                                                                                    \
    launch_select<K>(rows, n_rows, n, segments, seg_len, row0, state, part_s, part_i, stream); \
    break;
    SIMKIT_SELECT_CASE(8)
    SIMKIT_SELECT_CASE(16)
    SIMKIT_SELECT_CASE(32)
    SIMKIT_SELECT_CASE(64)
    SIMKIT_SELECT_CASE(128)
    SIMKIT_SELECT_CASE(256)
    SIMKIT_SELECT_CASE(512)
    SIMKIT_SELECT_CASE(1024)
#undef SIMKIT_SELECT_CASE
    default:
      throw Failure(cat("internal: unsupported top-k width ", width));
  }
}

__global__ void fill_empty_kernel(float* s, std::uint32_t* idx, std::size_t n) {
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    s[e] = empty_key();
    idx[e] = kNone;
  }
}

__global__ void transpose_kernel(const float* in, std::size_t rows, std::size_t cols,
                                 std::size_t ld_in, float* out, std::size_t ld_out) {
  __shared__ float tile[32][33];
  const std::size_t r0 = static_cast<std::size_t>(blockIdx.y) * 32;
  const std::size_t c0 = static_cast<std::size_t>(blockIdx.x) * 32;
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const std::size_t r = r0 + y, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[y][threadIdx.x] = in[r * ld_in + c];
  }
  __syncthreads();
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const std::size_t c = c0 + y, r = r0 + threadIdx.x;
    if (r < rows && c < cols) out[c * ld_out + r] = tile[threadIdx.x][y];
  }
}

__global__ void collect_hits_kernel(const float* tile, std::size_t ld, std::size_t rows,
                                    std::size_t cols, std::size_t row0, std::size_t col0,
                                    detail::BlockMask mask, float threshold, ScoredPair* out,
                                    unsigned long long* count, std::size_t capacity) {
  const std::size_t total = rows * cols;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const int lane = threadIdx.x & 31;
  // The loop bound is the same for a whole warp, so every lane reaches the ballot.
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u);
       base < total; base += step) {
    const std::size_t e = base + lane;
    bool hit = false;
    float v = 0;
    std::size_t r = 0, c = 0;
    if (e < total) {
      r = e / cols;
      c = e % cols;
      v = tile[r * ld + c];
      hit = v >= threshold && mask.keeps(row0 + r, col0 + c);
    }
    const unsigned ballot = __ballot_sync(kFullMask, hit);
    if (ballot == 0) continue;
    unsigned long long first = 0;
    if (lane == 0) first = atomicAdd(count, static_cast<unsigned long long>(__popc(ballot)));
    first = __shfl_sync(kFullMask, first, 0);
    if (hit) {
      const unsigned long long at = first + __popc(ballot & ((1u << lane) - 1));
      if (at < capacity)
        out[at] = ScoredPair{static_cast<std::uint32_t>(row0 + r),
                             static_cast<std::uint32_t>(col0 + c), v};
    }
  }
}

}  // namespace

int state_width(std::size_t k) {
  if (k == 0 || k > kMaxGpuK)
    throw UsageError(cat("k = ", k, " is out of range on the GPU (1..", kMaxGpuK, ")"));
  int width = 8;
  while (static_cast<std::size_t>(width) < k) width *= 2;
  return width;
}

void fill_empty(TopKState state, cudaStream_t stream) {
  const std::size_t n = state.rows * static_cast<std::size_t>(state.width);
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
  fill_empty_kernel<<<blocks, 256, 0, stream>>>(state.scores, state.indices, n);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

std::size_t select_scratch_entries(std::size_t rows, std::size_t cols, int width) {
  if (width == 0 || rows == 0) return 0;
  const std::size_t wave = 4 * static_cast<std::size_t>(sm_count());
  const std::size_t segments = std::max<std::size_t>(1, std::min((cols + kRound - 1) / kRound, wave / rows));
  return segments > 1 ? rows * segments * static_cast<std::size_t>(width) : 0;
}

void select_rows(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                 std::size_t row0, std::size_t col0, detail::BlockMask mask, TopKState state,
                 SelectScratch& scratch, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  // Long rows spread over as many blocks as run at once (one wave), then one merge.
  const std::size_t wave = 4 * static_cast<std::size_t>(sm_count());
  const std::size_t segments =
      std::max<std::size_t>(1, std::min((cols + kRound - 1) / kRound, wave / rows));
  const DenseRows dense{tile, ld, row0, col0, mask};
  if (segments == 1) {
    dispatch_select(state.width, dense, rows, cols, 1, cols, row0, state, nullptr, nullptr, stream);
    return;
  }
  const std::size_t per_row = segments * static_cast<std::size_t>(state.width);
  if (scratch.scores.size() < rows * per_row) {
    scratch.scores = DeviceBuffer<float>(rows * per_row);
    scratch.indices = DeviceBuffer<std::uint32_t>(rows * per_row);
  }
  const std::size_t seg_len = (cols + segments - 1) / segments;
  dispatch_select(state.width, dense, rows, cols, static_cast<int>(segments), seg_len, row0, state,
                  scratch.scores.get(), scratch.indices.get(), stream);
  const ListRows partial{scratch.scores.get(), scratch.indices.get(), per_row};
  dispatch_select(state.width, partial, rows, per_row, 1, per_row, row0, state, nullptr, nullptr,
                  stream);
}

void select_lists(const float* scores, const std::uint32_t* indices, const std::uint32_t* counts,
                  std::size_t per_row, std::size_t rows, std::size_t row0, TopKState state,
                  cudaStream_t stream) {
  if (rows == 0 || per_row == 0) return;
  const ListRows lists{scores, indices, per_row, counts};
  dispatch_select(state.width, lists, rows, per_row, 1, per_row, row0, state, nullptr, nullptr, stream);
}

void transpose(const float* in, std::size_t rows, std::size_t cols, std::size_t ld_in, float* out,
               std::size_t ld_out, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>((rows + 31) / 32));
  transpose_kernel<<<grid, dim3(32, 8), 0, stream>>>(in, rows, cols, ld_in, out, ld_out);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

void collect_hits(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                  std::size_t row0, std::size_t col0, detail::BlockMask mask, float threshold,
                  ScoredPair* out, unsigned long long* count, std::size_t capacity,
                  cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const std::size_t total = rows * cols;
  const unsigned blocks =
      static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 8 * sm_count()));
  collect_hits_kernel<<<blocks, 256, 0, stream>>>(tile, ld, rows, cols, row0, col0, mask,
                                                  threshold, out, count, capacity);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace simkit::cuda
