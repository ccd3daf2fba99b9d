// Inverted lists made on the device and the kernel that adds shared features' terms to a
// score tile (feature_lists.cuh).
#include "disco/cuda/feature_lists.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <bit>
#include <numeric>

#include "core/cuda/check.hpp"
#include "core/text.hpp"
#include "simkit/error.hpp"

namespace simkit::disco::detail {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr unsigned kWarp = 0xffffffffu;

// First position in [lo, hi) of words[] (ascending) holding a word >= w.
__device__ __forceinline__ std::uint32_t lower_bound(const std::uint32_t* words, std::uint32_t lo, std::uint32_t hi,
                                                     std::uint32_t w) {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (words[mid] < w) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

struct DeviceLists {
  const std::uint64_t* word_offsets;
  const std::uint32_t* word_lists;
  const float* word_values;
  const std::uint32_t* list_offsets;
  const std::uint32_t* list_words;
  const float* list_values;
};

// A warp a slice of kSliceColumns columns of b for a word i of a, its sums in shared
// memory (each warp its own, so the order of the adds is the warp's). i's features come
// 32 at a time: each lane finds one feature's postings inside the slice (the searches side
// by side), then the warp takes the features in order, its lanes adding to distinct words
// j, the next feature's first postings loaded while this one's adds go on. Last, the
// slice's sums go to the tile in one coalesced pass: added to what is there or written,
// and divided by s_i + s_j where Lin's division follows.
constexpr int kSlicesPerRow = 4, kRowsPerBlock = kWarpsPerBlock / kSlicesPerRow;
constexpr std::uint32_t kSliceColumns = 1024;
struct TileStep {
  bool accumulate;     // tile += the sums (else tile = the sums)
  const float* sums;   // Lin: every word's s (the tile then divided by s_i + s_j); else null
};
template <bool kProduct>
__global__ void add_shared_features(DeviceLists d, std::size_t a0, std::size_t rows, std::uint32_t b0,
                                    std::uint32_t b1, float* tile, std::size_t ld, TileStep step) {
  __shared__ float sums[kWarpsPerBlock][kSliceColumns];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const std::size_t r = static_cast<std::size_t>(blockIdx.x) * kRowsPerBlock + warp / kSlicesPerRow;
  const std::uint32_t c0 = b0 + (blockIdx.y * kSlicesPerRow + warp % kSlicesPerRow) * kSliceColumns;
  if (r >= rows || c0 >= b1) return;  // the whole warp (no block-wide barrier follows)
  const std::uint32_t c1 = min(c0 + kSliceColumns, b1), width = c1 - c0;
  const std::uint64_t first = d.word_offsets[a0 + r], last = d.word_offsets[a0 + r + 1];
  float* out = tile + r * ld + (c0 - b0);
  if (first == last && step.accumulate && step.sums == nullptr) return;  // nothing to add, nothing to divide
  float* mine = sums[warp];
  for (std::uint32_t j = lane; j < width; j += 32) mine[j] = 0.0f;
  __syncwarp();
  for (std::uint64_t base = first; base < last; base += 32) {
    std::uint32_t lo = 0, hi = 0;
    float value = 0;
    if (base + lane < last) {
      const std::uint32_t list = d.word_lists[base + lane];
      const std::uint32_t end = d.list_offsets[list + 1];
      value = d.word_values[base + lane];
      lo = lower_bound(d.list_words, d.list_offsets[list], end, c0);
      hi = lower_bound(d.list_words, lo, end, c1);
    }
    const int n = static_cast<int>(min(std::uint64_t{32}, last - base));
    // Feature t's lanes: q, its posting's word w and value x (while q < to).
    std::uint32_t q = __shfl_sync(kWarp, lo, 0) + lane, to = __shfl_sync(kWarp, hi, 0);
    float v = __shfl_sync(kWarp, value, 0);
    std::uint32_t w = q < to ? d.list_words[q] : 0;
    float x = q < to ? d.list_values[q] : 0.0f;
    for (int t = 0; t < n; ++t) {
      const int next = t + 1 < n ? t + 1 : t;
      const std::uint32_t nq = __shfl_sync(kWarp, lo, next) + lane;
      const std::uint32_t nto = t + 1 < n ? __shfl_sync(kWarp, hi, next) : 0;
      const float nv = __shfl_sync(kWarp, value, next);
      const std::uint32_t nw = nq < nto ? d.list_words[nq] : 0;
      const float nx = nq < nto ? d.list_values[nq] : 0.0f;
      while (q < to) {
        mine[w - c0] += kProduct ? v * x : v + x;
        q += 32;
        if (q < to) w = d.list_words[q], x = d.list_values[q];
      }
      __syncwarp();  // the next feature's adds to the same sums come after these
      q = nq, to = nto, v = nv, w = nw, x = nx;
    }
  }
  const float s_i = step.sums != nullptr ? step.sums[a0 + r] : 0.0f;
  for (std::uint32_t j = lane; j < width; j += 32) {
    float score = step.accumulate ? out[j] + mine[j] : mine[j];
    if (step.sums != nullptr) {
      const float sum = s_i + step.sums[c0 + j];
      score = sum > 0 ? score / sum : 0.0f;
    }
    out[j] = score;
  }
}

// Per word, how many of its entries are kept (a thread a word).
__global__ void count_kept(const std::uint64_t* offsets, const std::uint32_t* keys, const std::uint32_t* list_of,
                           std::size_t words, std::uint64_t* counts) {
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint64_t n = 0;
    for (std::uint64_t i = offsets[w]; i < offsets[w + 1]; ++i) n += list_of[keys[i]] != FeatureListsOnDevice::kNoList;
    counts[w] = n;
  }
}

// Each word's kept entries at its place: list, value, the word, and the place itself
// (what the sort by list carries).
__global__ void fill_kept(const std::uint64_t* offsets, const std::uint32_t* keys, const float* values,
                          const std::uint32_t* list_of, std::size_t words, const std::uint64_t* kept_offsets,
                          std::uint32_t* lists, float* kept_values, std::uint32_t* word_of, std::uint32_t* place) {
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint64_t at = kept_offsets[w];
    for (std::uint64_t i = offsets[w]; i < offsets[w + 1]; ++i)
      if (const std::uint32_t list = list_of[keys[i]]; list != FeatureListsOnDevice::kNoList) {
        lists[at] = list;
        kept_values[at] = values[i];
        word_of[at] = static_cast<std::uint32_t>(w);
        place[at] = static_cast<std::uint32_t>(at);
        ++at;
      }
  }
}

// Postings from the places sorted by list (stable: words ascending within a list).
__global__ void gather_postings(const std::uint32_t* sorted_places, std::size_t count, const std::uint32_t* word_of,
                                const float* kept_values, std::uint32_t* list_words, float* list_values) {
  for (std::size_t p = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; p < count;
       p += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t from = sorted_places[p];
    list_words[p] = word_of[from];
    list_values[p] = kept_values[from];
  }
}

unsigned grid_for(std::size_t threads) {
  return static_cast<unsigned>(std::clamp<std::size_t>((threads + 255) / 256, 1, 65535));
}

}  // namespace

std::size_t FeatureListsOnDevice::build_bytes(std::size_t words, std::size_t entries, std::size_t keys,
                                              const std::vector<std::uint32_t>& sizes) {
  const std::uint64_t postings = std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0});
  // The lists (offsets a word, a list; two 32-bit values a posting on each side); while
  // they are made, the entries (offsets, keys, values), the key map and the counts, then
  // four 32-bit arrays a posting and the sort's scratch (about two more).
  const std::size_t lists = (words + 1) * 8 + postings * 16 + (sizes.size() + 1) * 4;
  return lists + (words + 1) * 16 + entries * 8 + keys * 4 + postings * 24;
}

FeatureListsOnDevice::FeatureListsOnDevice(std::size_t words, const std::uint64_t* offsets, const std::uint32_t* keys,
                                           const float* values, const std::vector<std::uint32_t>& list_of,
                                           const std::vector<std::uint32_t>& sizes) {
  std::vector<std::uint32_t> list_offsets(sizes.size() + 1, 0);
  std::uint64_t postings = 0;
  for (std::size_t l = 0; l < sizes.size(); ++l) {
    postings += sizes[l];
    // Postings are numbered in 32 bits here, and a warp's lanes count 32 past the last.
    if (postings > kNoList - 64)
      throw UsageError(cat("more than ", kNoList - 64,
                           " shared features for the GPU's inverted lists; use --device cpu"));
    list_offsets[l + 1] = static_cast<std::uint32_t>(postings);
  }
  empty_ = postings == 0;
  const std::size_t n = postings;
  word_offsets_ = cuda::DeviceBuffer<std::uint64_t>(words + 1);
  word_lists_ = cuda::DeviceBuffer<std::uint32_t>(std::max<std::size_t>(n, 1));
  word_values_ = cuda::DeviceBuffer<float>(std::max<std::size_t>(n, 1));
  list_offsets_ = cuda::to_device(list_offsets.data(), list_offsets.size());
  list_words_ = cuda::DeviceBuffer<std::uint32_t>(std::max<std::size_t>(n, 1));
  list_values_ = cuda::DeviceBuffer<float>(std::max<std::size_t>(n, 1));
  const auto d_list_of = cuda::to_device(list_of.data(), list_of.size());
  // Word side: counts, their running sum, the kept entries in each word's order.
  cuda::DeviceBuffer<std::uint64_t> counts(words + 1);
  SIMKIT_CUDA_CHECK(cudaMemset(counts.get(), 0, (words + 1) * sizeof(std::uint64_t)));
  count_kept<<<grid_for(words), 256>>>(offsets, keys, d_list_of.get(), words, counts.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  std::size_t scan_bytes = 0;
  SIMKIT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, counts.get(), word_offsets_.get(), words + 1));
  cuda::DeviceBuffer<char> scan_scratch(std::max<std::size_t>(scan_bytes, 1));
  SIMKIT_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(scan_scratch.get(), scan_bytes, counts.get(), word_offsets_.get(), words + 1));
  if (n == 0) {
    SIMKIT_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  cuda::DeviceBuffer<std::uint32_t> word_of(n), places(n), sorted_lists(n), sorted_places(n);
  fill_kept<<<grid_for(words), 256>>>(offsets, keys, values, d_list_of.get(), words, word_offsets_.get(),
                                      word_lists_.get(), word_values_.get(), word_of.get(), places.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  // List side: the places sorted by list (radix sort is stable), then gathered.
  const int bits = std::max(1, static_cast<int>(std::bit_width(sizes.size())));
  std::size_t sort_bytes = 0;
  SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, word_lists_.get(), sorted_lists.get(),
                                                    places.get(), sorted_places.get(), n, 0, bits));
  cuda::DeviceBuffer<char> sort_scratch(std::max<std::size_t>(sort_bytes, 1));
  SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_scratch.get(), sort_bytes, word_lists_.get(),
                                                    sorted_lists.get(), places.get(), sorted_places.get(), n, 0, bits));
  gather_postings<<<grid_for(n), 256>>>(sorted_places.get(), n, word_of.get(), word_values_.get(), list_words_.get(),
                                        list_values_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  SIMKIT_CUDA_CHECK(cudaDeviceSynchronize());  // the scratch is freed on return
}

void FeatureListsOnDevice::add(RowRange a, RowRange b, bool product, bool accumulate, const float* sums, float* tile,
                               std::size_t ld, cudaStream_t stream) const {
  if (a.size() == 0 || b.size() == 0) return;
  const DeviceLists d{word_offsets_.get(), word_lists_.get(),   word_values_.get(),
                      list_offsets_.get(), list_words_.get(), list_values_.get()};
  const dim3 blocks(static_cast<unsigned>((a.size() + kRowsPerBlock - 1) / kRowsPerBlock),
                    static_cast<unsigned>((b.size() + kSlicesPerRow * kSliceColumns - 1) / (kSlicesPerRow * kSliceColumns)));
  const auto b0 = static_cast<std::uint32_t>(b.begin), b1 = static_cast<std::uint32_t>(b.end);
  const TileStep step{accumulate, sums};
  if (product)
    add_shared_features<true><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(d, a.begin, a.size(), b0, b1, tile, ld, step);
  else
    add_shared_features<false><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(d, a.begin, a.size(), b0, b1, tile, ld, step);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

}  // namespace simkit::disco::detail
