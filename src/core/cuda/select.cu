// Top-k selection and threshold collection on the GPU.
//
// Order: higher score first, equal scores by lower index (as simkit::ranks_before), so
// the kept set never depends on how rows are cut into segments or threads.
//
// k <= 32: each lane keeps a sorted list in registers, fed only by entries that beat
// both its own last entry and the row's running k-th best; warps then merge by repeated
// arg-max over the lanes' heads. k > 32: a shared-memory candidate buffer, compacted by
// a bitonic sort whenever it fills. Long rows are cut into segments whose partial lists
// a second pass merges with the running state.
#include <algorithm>
#include <cstdint>

#include "core/text.hpp"

#include "core/cuda/check.hpp"
#include "core/cuda/select.hpp"
#include "simkit/error.hpp"
#include "simkit/topk.hpp"

namespace simkit::cuda {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr std::uint32_t kNone = 0xffffffffu;

__device__ __forceinline__ bool before(float sa, std::uint32_t ia, float sb, std::uint32_t ib) {
  return sa > sb || (sa == sb && ia < ib);
}

__device__ __forceinline__ float empty_score() { return -__int_as_float(0x7f800000); }

// Entries of one row: a dense tile row or a list of (score, index) candidates.
struct DenseRows {
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

struct ListRows {
  const float* scores;
  const std::uint32_t* indices;
  std::size_t per_row;
  __device__ bool fetch(std::size_t r, std::size_t c, float& s, std::uint32_t& i) const {
    s = scores[r * per_row + c];
    i = indices[r * per_row + c];
    return true;
  }
};

template <int K>
struct LaneList {
  float s[K];
  std::uint32_t i[K];

  __device__ void clear() {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      s[j] = empty_score();
      i[j] = kNone;
    }
  }
  // Inserts (v, id) if it ranks before the last entry; keeps the list sorted.
  __device__ void offer(float v, std::uint32_t id) {
    if (!before(v, id, s[K - 1], i[K - 1])) return;
    s[K - 1] = v;
    i[K - 1] = id;
#pragma unroll
    for (int j = K - 1; j > 0; --j) {
      const bool swap = before(s[j], i[j], s[j - 1], i[j - 1]);
      const float ts = s[j];
      const std::uint32_t ti = i[j];
      s[j] = swap ? s[j - 1] : s[j];
      i[j] = swap ? i[j - 1] : i[j];
      s[j - 1] = swap ? ts : s[j - 1];
      i[j - 1] = swap ? ti : i[j - 1];
    }
  }
  __device__ void pop_front() {
#pragma unroll
    for (int j = 0; j + 1 < K; ++j) {
      s[j] = s[j + 1];
      i[j] = i[j + 1];
    }
    s[K - 1] = empty_score();
    i[K - 1] = kNone;
  }
};

// Writes the warp's K best (over all lanes' lists) to out_s/out_i, best first.
// All 32 lanes must call it; the lists are consumed.
template <int K>
__device__ void warp_merge(LaneList<K>& list, float* out_s, std::uint32_t* out_i) {
  const int lane = threadIdx.x & 31;
  for (int r = 0; r < K; ++r) {
    float bs = list.s[0];
    std::uint32_t bi = list.i[0];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      const float os = __shfl_xor_sync(kFullMask, bs, offset);
      const std::uint32_t oi = __shfl_xor_sync(kFullMask, bi, offset);
      if (before(os, oi, bs, bi)) {
        bs = os;
        bi = oi;
      }
    }
    if (lane == 0) {
      out_s[r] = bs;
      out_i[r] = bi;
    }
    if (bi == kNone) {
      // Only empty slots remain.
      for (int e = r + 1 + lane; e < K; e += 32) {
        out_s[e] = empty_score();
        out_i[e] = kNone;
      }
      break;
    }
    if (list.i[0] == bi) list.pop_front();
  }
  __syncwarp();
}

// One block per (row, segment). Rows of the state are row0 + r.
template <int K, typename Rows>
__global__ void __launch_bounds__(kThreads)
    select_warp_lists(Rows rows, std::size_t n, int segments, std::size_t seg_len,
                      std::size_t row0, float* state_s, std::uint32_t* state_i, float* part_s,
                      std::uint32_t* part_i) {
  __shared__ float warp_s[kWarps * K];
  __shared__ std::uint32_t warp_i[kWarps * K];
  __shared__ float final_s[K];
  __shared__ std::uint32_t final_i[K];

  const std::size_t r = blockIdx.x / segments;
  const int seg = static_cast<int>(blockIdx.x % segments);
  const std::size_t row = row0 + r;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  const float bar_s = state_s[row * K + K - 1];
  const std::uint32_t bar_i = state_i[row * K + K - 1];

  const std::size_t c_begin = static_cast<std::size_t>(seg) * seg_len;
  const std::size_t c_end = c_begin + seg_len < n ? c_begin + seg_len : n;

  LaneList<K> list;
  list.clear();
  constexpr int kUnroll = 4;
  std::size_t c = c_begin + threadIdx.x;
  for (; c + (kUnroll - 1) * kThreads < c_end; c += kUnroll * kThreads) {
    float v[kUnroll];
    std::uint32_t id[kUnroll];
    bool keep[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) keep[u] = rows.fetch(r, c + u * kThreads, v[u], id[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (keep[u] && before(v[u], id[u], bar_s, bar_i)) list.offer(v[u], id[u]);
  }
  for (; c < c_end; c += kThreads) {
    float v;
    std::uint32_t id;
    if (rows.fetch(r, c, v, id) && before(v, id, bar_s, bar_i)) list.offer(v, id);
  }

  warp_merge<K>(list, warp_s + warp * K, warp_i + warp * K);
  __syncthreads();
  if (warp != 0) return;

  list.clear();
  for (int e = lane; e < kWarps * K; e += 32) list.offer(warp_s[e], warp_i[e]);
  if (segments == 1)
    for (int e = lane; e < K; e += 32) list.offer(state_s[row * K + e], state_i[row * K + e]);
  warp_merge<K>(list, final_s, final_i);
  for (int e = lane; e < K; e += 32) {
    if (segments == 1) {
      state_s[row * K + e] = final_s[e];
      state_i[row * K + e] = final_i[e];
    } else {
      const std::size_t at = (r * segments + seg) * K + e;
      part_s[at] = final_s[e];
      part_i[at] = final_i[e];
    }
  }
}

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
        const bool j_first = before(s[j], idx[j], s[i], idx[i]);
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

// k > 32: candidates that beat the bar gather in shared memory; when the buffer could
// overflow in the next round it is sorted and cut back to K, raising the bar.
template <int K, typename Rows>
__global__ void __launch_bounds__(kThreads)
    select_block_buffer(Rows rows, std::size_t n, int segments, std::size_t seg_len,
                        std::size_t row0, float* state_s, std::uint32_t* state_i, float* part_s,
                        std::uint32_t* part_i) {
  constexpr int kCap = next_pow2(4 * K > K + 2 * kThreads ? 4 * K : K + 2 * kThreads);
  static_assert(kCap >= K + 2 * kThreads, "buffer must hold K plus one round");
  __shared__ float buf_s[kCap];
  __shared__ std::uint32_t buf_i[kCap];
  __shared__ int count;
  __shared__ float bar_s;
  __shared__ std::uint32_t bar_i;

  const std::size_t r = blockIdx.x / segments;
  const int seg = static_cast<int>(blockIdx.x % segments);
  const std::size_t row = row0 + r;
  const std::size_t c_begin = static_cast<std::size_t>(seg) * seg_len;
  const std::size_t c_end = c_begin + seg_len < n ? c_begin + seg_len : n;

  if (threadIdx.x == 0) {
    count = 0;
    bar_s = state_s[row * K + K - 1];
    bar_i = state_i[row * K + K - 1];
  }
  __syncthreads();
  if (segments == 1) {
    // The running state joins as candidates so the result replaces it.
    for (int e = threadIdx.x; e < K; e += blockDim.x) {
      buf_s[e] = state_s[row * K + e];
      buf_i[e] = state_i[row * K + e];
    }
    if (threadIdx.x == 0) count = K;
    __syncthreads();
  }

  auto compact = [&]() {
    for (int e = count + threadIdx.x; e < kCap; e += blockDim.x) {
      buf_s[e] = empty_score();
      buf_i[e] = kNone;
    }
    __syncthreads();
    bitonic_sort(buf_s, buf_i, kCap);
    if (threadIdx.x == 0) {
      count = K;
      bar_s = buf_s[K - 1];
      bar_i = buf_i[K - 1];
    }
    __syncthreads();
  };

  for (std::size_t base = c_begin; base < c_end; base += kThreads) {
    const std::size_t c = base + threadIdx.x;
    float v;
    std::uint32_t id;
    if (c < c_end && rows.fetch(r, c, v, id) && before(v, id, bar_s, bar_i)) {
      const int at = atomicAdd(&count, 1);
      buf_s[at] = v;
      buf_i[at] = id;
    }
    __syncthreads();
    if (count > kCap - kThreads) compact();
  }
  compact();
  for (int e = threadIdx.x; e < K; e += blockDim.x) {
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
  if constexpr (K <= 32)
    select_warp_lists<K, Rows><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        rows, n, segments, seg_len, row0, state.scores, state.indices, part_s, part_i);
  else
    select_block_buffer<K, Rows><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
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

int sm_count() {
  static int count = [] {
    int device = 0, sms = 0;
    SIMKIT_CUDA_CHECK(cudaGetDevice(&device));
    SIMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  }();
  return count;
}

__global__ void fill_empty_kernel(float* s, std::uint32_t* idx, std::size_t n) {
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    s[e] = empty_score();
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

void select_rows(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                 std::size_t row0, std::size_t col0, detail::BlockMask mask, TopKState state,
                 SelectScratch& scratch, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  // Enough blocks to fill the GPU a few times over, each with at least kMinSegment columns.
  constexpr std::size_t kMinSegment = 2048;
  const std::size_t target_blocks = 4 * static_cast<std::size_t>(sm_count());
  std::size_t segments = std::max<std::size_t>(1, (target_blocks + rows - 1) / rows);
  segments = std::min(segments, std::max<std::size_t>(1, cols / kMinSegment));
  const std::size_t seg_len = (cols + segments - 1) / segments;
  segments = (cols + seg_len - 1) / seg_len;

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
  dispatch_select(state.width, dense, rows, cols, static_cast<int>(segments), seg_len, row0, state,
                  scratch.scores.get(), scratch.indices.get(), stream);
  const ListRows partial{scratch.scores.get(), scratch.indices.get(), per_row};
  dispatch_select(state.width, partial, rows, per_row, 1, per_row, row0, state, nullptr, nullptr,
                  stream);
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
