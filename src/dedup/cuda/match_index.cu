// ssdeep-mode matching on the GPU through a 7-gram index (match_indexed_gpu in
// dedup/match_gpu.hpp), the CPU index's rule (dedup/match.cpp) with sorts in place of its
// lists:
//   1. keys: each signature's identity (its whole text at its block size) and each part's
//      7-character substrings at the part's block size, 64 bits exact (a 21-bit id of the
//      block size, seven 6-bit codes), radix-sorted with the signature's position (the
//      sort is stable, so a key's signatures stay in order); a signature's repeated keys
//      dropped.
//   2. per signature, how many later signatures its keys list; where that is more than
//      its compatible later signatures, it meets those instead (the work never exceeds
//      all pairs).
//   3. a chunk of signatures at a time (as many candidate pairs as memory holds): the
//      candidates written as (row, column) keys, sorted and made unique, then scored, a
//      warp a row: the row's parts as bit masks in shared memory, its columns a lane each.
// Positions are in block-size order (CompatibleGroups), so a pair (p < q) has equal block
// sizes or q's is twice p's.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "core/phase_clock.hpp"
#include "core/prefault.hpp"
#include "dedup/compatible.hpp"
#include "dedup/cuda/ctph_bits.cuh"
#include "dedup/match_gpu.hpp"
#include "dedup/sorted_runs.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/threads.hpp"

namespace simkit::dedup {

namespace {

using gpu::kCodes;
using gpu::PartCodes;

constexpr int kGramBits = 42;                          // seven 6-bit codes
constexpr std::uint32_t kMaxLevels = 1u << 21;         // block-size ids stay below bit 63
constexpr std::uint64_t kIdentity = std::uint64_t{1} << 63;
constexpr int kWarps = 8;                              // rows a block of the scoring kernel
constexpr std::size_t kPiecesAGpu = 4;                 // a dealt job's pieces of rows, a GPU

__host__ __device__ constexpr std::uint32_t grams(unsigned length) { return length >= 7 ? length - 6 : 0; }

// The signatures in block-size order, as the kernels read them.
struct Signatures {
  const PartCodes* codes;           // [position][part]
  const unsigned char* length;      // [position][part]
  const std::uint32_t* level;       // [position][part]: the id of the part's block size
  const std::uint64_t* block_size;  // [position]
  const std::uint32_t* index;       // [position]: the caller's index
};

__device__ __forceinline__ std::uint64_t mix(std::uint64_t h) {  // splitmix64's finaliser
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

// Signature k's keys at [offset[k], offset[k + 1]): its identity (a hash: a collision
// only adds a candidate, which scoring rejects), then each keyed part's 7-grams.
__global__ void make_keys(Signatures s, std::uint32_t n, const std::uint64_t* offset, std::uint64_t* keys,
                          std::uint32_t* owner) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  std::uint64_t at = offset[k];
  std::uint64_t h = mix(s.level[2 * k] + 1ull);
  for (int p = 0; p < 2; ++p) {
    const unsigned length = s.length[2 * k + p];
    h = mix(h ^ (length + 0x100ull * p));
    for (unsigned i = 0; i < length; ++i) h = mix(h ^ s.codes[2 * k + p].code[i]);
  }
  keys[at] = kIdentity | (h >> 1);
  owner[at++] = k;
  for (int p = 0; p < 2; ++p) {
    const std::uint32_t level = s.level[2 * k + p];
    const unsigned length = s.length[2 * k + p];
    std::uint64_t gram = 0;
    for (unsigned i = 0; i < length; ++i) {
      gram = ((gram << 6) | s.codes[2 * k + p].code[i]) & ((1ull << kGramBits) - 1);
      if (i < 6) continue;
      keys[at] = static_cast<std::uint64_t>(level) << kGramBits | gram;
      owner[at++] = k;
    }
  }
}

// keep[e]: the first of equal (key, owner) entries. head[e]: the first of a key's run.
__global__ void mark_repeats(const std::uint64_t* keys, const std::uint32_t* owner, std::uint32_t entries,
                             std::uint8_t* keep) {
  const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < entries) keep[e] = e == 0 || keys[e] != keys[e - 1] || owner[e] != owner[e - 1];
}

__global__ void mark_heads(const std::uint64_t* keys, std::uint32_t entries, std::uint32_t* head) {
  const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < entries) head[e] = e == 0 || keys[e] != keys[e - 1];
}

// run[e] (the run's number + 1, from the heads' inclusive sum) -> run_end[run - 1].
__global__ void mark_run_ends(const std::uint64_t* keys, const std::uint32_t* run, std::uint32_t entries,
                              std::uint32_t* run_end) {
  const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < entries && (e + 1 == entries || keys[e + 1] != keys[e])) run_end[run[e] - 1] = e + 1;
}

__device__ __forceinline__ std::uint32_t later_in_run(const std::uint32_t* run, const std::uint32_t* run_end,
                                                      std::uint32_t e) {
  return run_end[run[e] - 1] - e - 1;
}

// listed[k]: how many later signatures k's keys list, repeats included.
__global__ void count_listed(const std::uint32_t* owner, const std::uint32_t* run, const std::uint32_t* run_end,
                             std::uint32_t entries, unsigned long long* listed) {
  const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= entries) return;
  const std::uint32_t later = later_in_run(run, run_end, e);
  if (later > 0) atomicAdd(listed + owner[e], static_cast<unsigned long long>(later));
}

// The candidates an entry adds to a chunk of rows [lo, hi): its run's later signatures,
// where its owner meets signatures through its keys.
__global__ void count_candidates(const std::uint32_t* owner, const std::uint32_t* run, const std::uint32_t* run_end,
                                 const std::uint8_t* direct, std::uint32_t entries, std::uint32_t lo, std::uint32_t hi,
                                 std::uint64_t* count) {
  const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= entries) return;
  const std::uint32_t k = owner[e];
  count[e] = k >= lo && k < hi && !direct[k] ? later_in_run(run, run_end, e) : 0;
}

__global__ void write_candidates(const std::uint32_t* owner, const std::uint32_t* run, const std::uint32_t* run_end,
                                 const std::uint8_t* direct, std::uint32_t entries, std::uint32_t lo, std::uint32_t hi,
                                 const std::uint64_t* at, int column_bits, std::uint64_t* pairs) {
  const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= entries) return;
  const std::uint32_t k = owner[e];
  if (k < lo || k >= hi || direct[k]) return;
  const std::uint64_t row = static_cast<std::uint64_t>(k - lo) << column_bits;
  std::uint64_t out = at[e];
  for (std::uint32_t q = e + 1, end = run_end[run[e] - 1]; q < end; ++q) pairs[out++] = row | owner[q];
}

// A row that meets every compatible later signature: its group's rest and the group of
// twice its block size.
struct DirectRow {
  std::uint32_t row, group_end, double_begin, double_end;
  std::uint64_t at;
};

__global__ void write_direct(const DirectRow* rows, std::uint32_t lo, int column_bits, std::uint64_t* pairs) {
  const DirectRow r = rows[blockIdx.x];
  const std::uint64_t row = static_cast<std::uint64_t>(r.row - lo) << column_bits;
  const std::uint32_t own = r.group_end - r.row - 1;
  const std::uint32_t count = own + (r.double_end - r.double_begin);
  for (std::uint32_t i = threadIdx.x; i < count; i += blockDim.x)
    pairs[r.at + i] = row | (i < own ? r.row + 1 + i : r.double_begin + (i - own));
}

__global__ void mark_rows(const std::uint64_t* pairs, std::uint32_t count, int column_bits, std::uint32_t* head) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) head[i] = i == 0 || (pairs[i] >> column_bits) != (pairs[i - 1] >> column_bits);
}

__global__ void mark_row_starts(const std::uint32_t* head, const std::uint32_t* segment, std::uint32_t count,
                                std::uint32_t* start) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count && head[i]) start[segment[i] - 1] = i;
}

// A warp a row: the row's two parts as masks (lane c builds code c's), then its columns a
// lane each, scored as libfuzzy does (dedup/ctph_compare.cpp).
__global__ void __launch_bounds__(32 * kWarps)
    score_rows(Signatures s, const std::uint64_t* pairs, const std::uint32_t* start, std::uint32_t rows,
               std::uint32_t count, std::uint32_t lo, int column_bits, int threshold, std::uint64_t* found_pair,
               std::int32_t* found_score, unsigned long long* found) {
  __shared__ std::uint64_t masks[kWarps][2][kCodes];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const std::uint64_t column_mask = (1ull << column_bits) - 1;
  for (std::uint32_t r = blockIdx.x * kWarps + warp; r < rows; r += gridDim.x * kWarps) {
    const std::uint32_t begin = start[r], end = r + 1 < rows ? start[r + 1] : count;
    const std::uint32_t p = lo + static_cast<std::uint32_t>(pairs[begin] >> column_bits);
    unsigned lx[2];
    for (int part = 0; part < 2; ++part) {
      lx[part] = s.length[2 * p + part];
      const unsigned char* code = s.codes[2 * p + part].code;
      for (unsigned c = lane; c < kCodes; c += 32) {
        std::uint64_t m = 0;
        for (unsigned i = 0; i < lx[part]; ++i) m |= static_cast<std::uint64_t>(code[i] == c) << i;
        masks[warp][part][c] = m;
      }
    }
    __syncwarp();
    const std::uint64_t bp = s.block_size[p];
    for (std::uint32_t i = begin + lane; i < end; i += 32) {
      const auto q = static_cast<std::uint32_t>(pairs[i] & column_mask);
      const std::uint64_t bq = s.block_size[q];
      unsigned score = 0;
      if (bp == bq) {
        const unsigned ly0 = s.length[2 * q], ly1 = s.length[2 * q + 1];
        const PartCodes& y0 = s.codes[2 * q];
        const PartCodes& y1 = s.codes[2 * q + 1];
        const unsigned c0 = gpu::lcs(masks[warp][0], 1, 0, y0, ly0, lx[0], lx[0] <= 32);
        const unsigned c1 = gpu::lcs(masks[warp][1], 1, 0, y1, ly1, lx[1], lx[1] <= 32);
        if (ly0 == lx[0] && c0 == ly0 && ly1 == lx[1] && c1 == ly1)
          score = 100;  // identical signatures
        else
          score = max(gpu::part_score(lx[0], ly0, c0, bp, threshold, masks[warp][0], 1, 0, y0),
                      gpu::part_score(lx[1], ly1, c1, bp * 2, threshold, masks[warp][1], 1, 0, y1));
      } else if (bp <= ~0ull / 2 && bp * 2 == bq) {
        const unsigned ly = s.length[2 * q];
        const PartCodes& y = s.codes[2 * q];
        const unsigned c = gpu::lcs(masks[warp][1], 1, 0, y, ly, lx[1], lx[1] <= 32);
        score = gpu::part_score(lx[1], ly, c, bq, threshold, masks[warp][1], 1, 0, y);
      }
      if (score > 0 && score >= static_cast<unsigned>(threshold)) {
        const unsigned long long slot = atomicAdd(found, 1ull);
        const std::uint32_t a = s.index[p], b = s.index[q];
        found_pair[slot] = static_cast<std::uint64_t>(min(a, b)) << 32 | max(a, b);
        found_score[slot] = static_cast<std::int32_t>(score);
      }
    }
    __syncwarp();
  }
}

unsigned grid_for(std::uint64_t items, unsigned threads = 256) {
  return static_cast<unsigned>((items + threads - 1) / threads);
}

int bit_width_of(std::uint64_t largest) { return std::max(1, static_cast<int>(std::bit_width(largest))); }

// CUB's scratch space, grown as the calls ask.
struct Scratch {
  cuda::DeviceBuffer<unsigned char> bytes;
  void* at(std::size_t size) {
    if (size > bytes.size()) bytes = cuda::DeviceBuffer<unsigned char>(size);
    return bytes.get();
  }
};

template <typename T>
T read_back(const T* device, cudaStream_t stream) {
  T value{};
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(&value, device, sizeof(T), cudaMemcpyDeviceToHost, stream));
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

template <typename Vector>
auto upload(const Vector& host, cudaStream_t stream) {
  using T = typename Vector::value_type;
  cuda::DeviceBuffer<T> buffer(std::max<std::size_t>(host.size(), 1));
  if (!host.empty())
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  return buffer;
}

// Matches sorted as (a, b) keys, their scores beside, written as the caller's.
__global__ void pack_matches(const std::uint64_t* pair, const std::int32_t* score, std::uint32_t count,
                             gpu::DeviceMatch* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = {static_cast<std::uint32_t>(pair[i] >> 32), static_cast<std::uint32_t>(pair[i]), score[i]};
}

// A chunk's matches left on its device, unsorted: (a, b) keys and scores.
struct Waiting {
  cuda::DeviceBuffer<std::uint64_t> pairs;
  cuda::DeviceBuffer<std::int32_t> scores;
};

// CUB's scratch bytes for sort_matches of `count` matches.
std::size_t sort_bytes(std::size_t count, int index_bits) {
  std::size_t bytes = 0;
  cub::DoubleBuffer<std::uint64_t> pairs(nullptr, nullptr);
  cub::DoubleBuffer<std::int32_t> scores(nullptr, nullptr);
  SIMKIT_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(nullptr, bytes, pairs, scores, static_cast<int>(count), 0, index_bits, nullptr));
  return bytes;
}

// `count` matches as (a, b) keys and scores, each with its twin, sorted by (a, b) (the
// caller's indices, `index_bits` of them) on the stream's device: Current() the sorted.
void sort_matches(cub::DoubleBuffer<std::uint64_t>& pairs, cub::DoubleBuffer<std::int32_t>& scores, std::size_t count,
                  int index_bits, Scratch& scratch, cudaStream_t st) {
  if (count == 0) return;
  if (count > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Failure("too many matches to sort at once on the GPU");
  std::size_t bytes = sort_bytes(count, index_bits);
  SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.at(bytes), bytes, pairs, scores, static_cast<int>(count), 0,
                                                    index_bits, st));
}

// `count` sorted matches written as the caller's over `packed` and copied down to `to`.
void packed_down(const std::uint64_t* pairs, const std::int32_t* scores, std::size_t count, gpu::DeviceMatch* packed,
                 Match* to, cudaStream_t st) {
  if (count == 0) return;
  pack_matches<<<grid_for(count), 256, 0, st>>>(pairs, scores, static_cast<std::uint32_t>(count), packed);
  SIMKIT_CUDA_CHECK_LAUNCH();
  static_assert(sizeof(gpu::DeviceMatch) == sizeof(Match));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(to, packed, count * sizeof(Match), cudaMemcpyDeviceToHost, st));
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(st));
}

// `count` matches sorted on the stream's device, written as the caller's over `packed`
// and brought down as one run.
MatchList sorted_down(cub::DoubleBuffer<std::uint64_t> pairs, cub::DoubleBuffer<std::int32_t> scores,
                      std::size_t count, int index_bits, gpu::DeviceMatch* packed, Scratch& scratch,
                      cudaStream_t st) {
  if (count == 0) return {};
  sort_matches(pairs, scores, count, index_bits, scratch, st);
  MatchList run = faulted_in<MatchList>(count);
  packed_down(pairs.Current(), scores.Current(), count, packed, run.data(), st);
  return run;
}

// Device bytes a match gathered takes: its key and score twice (the sort), and packed.
constexpr std::size_t kGatheredBytes = 2 * (8 + 4) + sizeof(gpu::DeviceMatch);

std::size_t waiting_count(const std::deque<Waiting>& waiting) {
  std::size_t count = 0;
  for (const Waiting& w : waiting) count += w.pairs.size();
  return count;
}

// The matches waiting on one or more GPUs ((GPU, its list) each) copied to `device` (the
// current one; from another GPU, peer to peer), sorted there and brought down as one run.
MatchList gather_down(const std::vector<std::pair<int, const std::deque<Waiting>*>>& from, int device,
                      int index_bits, Scratch& scratch, cudaStream_t st) {
  std::size_t total = 0;
  for (const auto& [gpu, list] : from) total += waiting_count(*list);
  if (total == 0) return {};
  cuda::DeviceBuffer<std::uint64_t> pairs(total), pairs_other(total);
  cuda::DeviceBuffer<std::int32_t> scores(total), scores_other(total);
  cuda::DeviceBuffer<gpu::DeviceMatch> packed(total);
  std::size_t at = 0;
  for (const auto& [gpu, list] : from)
    for (const Waiting& w : *list) {
      const std::size_t count = w.pairs.size();
      SIMKIT_CUDA_CHECK(cudaMemcpyPeerAsync(pairs.get() + at, device, w.pairs.get(), gpu, count * sizeof(std::uint64_t), st));
      SIMKIT_CUDA_CHECK(cudaMemcpyPeerAsync(scores.get() + at, device, w.scores.get(), gpu, count * sizeof(std::int32_t), st));
      at += count;
    }
  return sorted_down({pairs.get(), pairs_other.get()}, {scores.get(), scores_other.get()}, total, index_bits,
                     packed.get(), scratch, st);
}

// samples[j]: the key at position j * count / samples of sorted `keys`.
__global__ void take_samples(const std::uint64_t* keys, std::size_t count, std::uint32_t samples,
                             std::uint64_t* out) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < samples) out[j] = keys[count * j / samples];
}

// cuts[s]: where splitter s would go in sorted `keys` (the first key not below it).
__global__ void find_cuts(const std::uint64_t* keys, std::size_t count, const std::uint64_t* splitters,
                          std::uint32_t splitter_count, std::uint64_t* cuts) {
  const std::uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= splitter_count) return;
  std::size_t lo = 0, hi = count;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < splitters[s]) lo = mid + 1;
    else hi = mid;
  }
  cuts[s] = lo;
}

// One GPU's part of a spread: its own matches in one place and sorted (and the sort's
// twins), its range gathered from every GPU and sorted (and the twins and the packed
// copy), CUB's scratch, the samples and cuts.
struct SpreadBuffers {
  cuda::DeviceBuffer<std::uint64_t> own_pairs, own_pairs_other, range_pairs, range_pairs_other;
  cuda::DeviceBuffer<std::int32_t> own_scores, own_scores_other, range_scores, range_scores_other;
  cuda::DeviceBuffer<gpu::DeviceMatch> packed;
  Scratch scratch;
  cuda::DeviceBuffer<std::uint64_t> taken, splitters, cuts;
  std::uint64_t* sorted_pairs = nullptr;  // where the own sort left them
  std::int32_t* sorted_scores = nullptr;

  void make_range(std::size_t count) {
    range_pairs = cuda::DeviceBuffer<std::uint64_t>(count);
    range_pairs_other = cuda::DeviceBuffer<std::uint64_t>(count);
    range_scores = cuda::DeviceBuffer<std::int32_t>(count);
    range_scores_other = cuda::DeviceBuffer<std::int32_t>(count);
    packed = cuda::DeviceBuffer<gpu::DeviceMatch>(count);
  }
};

// The matches waiting on each GPU `devices[w]` (left[w]) brought down as one sorted run,
// every GPU at work at once: each sorts its own; the order is cut into a range a GPU at
// keys sampled from all of them; each GPU gathers its range from the others (peer to
// peer), sorts it and copies it down into its place in the run. Null for one GPU, and
// where a GPU lacks the memory for it or a sort would pass CUB's int (the caller then
// gathers each GPU's on it; the matches wait as before).
std::optional<MatchList> spread_down(const std::vector<int>& devices, std::vector<std::deque<Waiting>>& left,
                                     int index_bits) {
  const std::size_t gpus = devices.size();
  if (gpus < 2) return std::nullopt;  // (one GPU: its own run, sorted once, by the caller's other way)
  std::vector<std::size_t> counts(gpus);
  std::size_t total = 0;
  for (std::size_t w = 0; w < gpus; ++w) total += counts[w] = waiting_count(left[w]);
  if (total == 0) return MatchList{};
  // A range's matches are about total / gpus; the samples' error is under total / 512.
  // (The check counts the waiting matches, whose memory is taken already, as a margin for
  // CUB's scratch and the samples: all of it is held at once below.)
  const std::size_t range_bound = total / gpus + total / 256 + 1;
  constexpr auto kMostSorted = static_cast<std::size_t>(std::numeric_limits<int>::max());  // (CUB's int)
  if (range_bound > kMostSorted) return std::nullopt;
  constexpr std::size_t kOwnBytes = 3 * (8 + 4);  // a GPU's own match: waiting, in one place, the sort's twin
  for (std::size_t w = 0; w < gpus; ++w) {
    const cuda::DeviceGuard guard(devices[w]);
    if (counts[w] > kMostSorted || counts[w] * kOwnBytes + range_bound * kGatheredBytes > device_memory_share() / 2)
      return std::nullopt;
  }
  PhaseClock clock("dedup: the matches spread");
  // Every GPU's memory for the spread made first: then the answer's pages are faulted in
  // on all cores beside the GPUs' work (allocations made meanwhile waited for the kernel's
  // map of the process: 4 ms -> 30-40 ms at two million hashes, call 135). Freed at the
  // end, each GPU's with it current (the waiting matches too).
  constexpr std::size_t kSamples = 512;  // a GPU's over all, each GPU's by its part of them
  std::vector<SpreadBuffers> buffers(gpus);
  const auto free_buffers = [&] {
    for (std::size_t w = 0; w < gpus; ++w) {
      const cuda::DeviceGuard guard(devices[w]);
      buffers[w] = {};
    }
  };
  const auto free_all = [&] {
    free_buffers();
    for (std::size_t w = 0; w < gpus; ++w) {
      const cuda::DeviceGuard guard(devices[w]);
      left[w].clear();
    }
  };
  try {
    run_parts(gpus, [&](std::size_t w) {
      const cuda::DeviceGuard guard(devices[w]);
      SpreadBuffers& b = buffers[w];
      b.own_pairs = cuda::DeviceBuffer<std::uint64_t>(counts[w]);
      b.own_pairs_other = cuda::DeviceBuffer<std::uint64_t>(counts[w]);
      b.own_scores = cuda::DeviceBuffer<std::int32_t>(counts[w]);
      b.own_scores_other = cuda::DeviceBuffer<std::int32_t>(counts[w]);
      b.make_range(range_bound);
      b.scratch.at(sort_bytes(std::max(counts[w], range_bound), index_bits));
      b.taken = cuda::DeviceBuffer<std::uint64_t>(kSamples * gpus);
      b.splitters = cuda::DeviceBuffer<std::uint64_t>(gpus);
      b.cuts = cuda::DeviceBuffer<std::uint64_t>(gpus);
    });
  } catch (const Failure&) {  // a GPU without the room after all (another process took it)
    free_buffers();
    return std::nullopt;  // (the matches still wait: the caller gathers each GPU's)
  } catch (...) {
    free_all();
    throw;
  }
  clock.mark("each GPU's memory made");
  std::future<MatchList> answer;
  const auto spread = [&] {
    answer = std::async(std::launch::async, [total] { return faulted_in<MatchList>(total); });  // (its pages)
    // 1. Each GPU's matches in one place, sorted, and samples of them.
    std::vector<std::vector<std::uint64_t>> samples(gpus);
    run_parts(gpus, [&](std::size_t w) {
      const std::size_t count = counts[w];
      if (count == 0) return;
      const cuda::DeviceGuard guard(devices[w]);
      const cuda::Stream stream;
      const cudaStream_t st = stream.get();
      SpreadBuffers& b = buffers[w];
      std::size_t at = 0;
      for (const Waiting& chunk : left[w]) {
        const std::size_t n = chunk.pairs.size();
        SIMKIT_CUDA_CHECK(cudaMemcpyAsync(b.own_pairs.get() + at, chunk.pairs.get(), n * 8, cudaMemcpyDeviceToDevice, st));
        SIMKIT_CUDA_CHECK(cudaMemcpyAsync(b.own_scores.get() + at, chunk.scores.get(), n * 4, cudaMemcpyDeviceToDevice, st));
        at += n;
      }
      cub::DoubleBuffer<std::uint64_t> pair_buffers(b.own_pairs.get(), b.own_pairs_other.get());
      cub::DoubleBuffer<std::int32_t> score_buffers(b.own_scores.get(), b.own_scores_other.get());
      sort_matches(pair_buffers, score_buffers, count, index_bits, b.scratch, st);
      b.sorted_pairs = pair_buffers.Current();
      b.sorted_scores = score_buffers.Current();
      const std::size_t take = std::max<std::size_t>(1, kSamples * gpus * count / total);
      take_samples<<<grid_for(take), 256, 0, st>>>(b.sorted_pairs, count, static_cast<std::uint32_t>(take), b.taken.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
      samples[w].resize(take);
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(samples[w].data(), b.taken.get(), take * 8, cudaMemcpyDeviceToHost, st));
      stream.sync();
    });
    clock.mark("each GPU's sorted");
    // 2. The splitters: gpus - 1 keys from all the samples, evenly; cuts[w][d]: where range
    // d begins in GPU w's matches.
    std::vector<std::uint64_t> all_samples;
    for (const auto& taken : samples) all_samples.insert(all_samples.end(), taken.begin(), taken.end());
    std::sort(all_samples.begin(), all_samples.end());
    std::vector<std::uint64_t> splitters;
    for (std::size_t d = 1; d < gpus; ++d) splitters.push_back(all_samples[all_samples.size() * d / gpus]);
    std::vector<std::vector<std::uint64_t>> cuts(gpus, std::vector<std::uint64_t>(gpus + 1, 0));
    run_parts(gpus, [&](std::size_t w) {
      cuts[w][gpus] = counts[w];
      if (counts[w] == 0) return;
      const cuda::DeviceGuard guard(devices[w]);
      const cuda::Stream stream;
      SpreadBuffers& b = buffers[w];
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(b.splitters.get(), splitters.data(), (gpus - 1) * 8, cudaMemcpyHostToDevice,
                                        stream.get()));
      find_cuts<<<grid_for(gpus - 1), 256, 0, stream.get()>>>(b.sorted_pairs, counts[w], b.splitters.get(),
                                                              static_cast<std::uint32_t>(gpus - 1), b.cuts.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(cuts[w].data() + 1, b.cuts.get(), (gpus - 1) * 8, cudaMemcpyDeviceToHost,
                                        stream.get()));
      stream.sync();
    });
    std::vector<std::size_t> range(gpus, 0), begin(gpus + 1, 0);
    for (std::size_t d = 0; d < gpus; ++d) {
      for (std::size_t w = 0; w < gpus; ++w) range[d] += cuts[w][d + 1] - cuts[w][d];
      begin[d + 1] = begin[d] + range[d];
    }
    MatchList run = answer.get();
    clock.mark("cut into ranges");
    // 3. Each GPU's range gathered, sorted and copied down into its place.
    run_parts(gpus, [&](std::size_t d) {
      const std::size_t count = range[d];
      if (count == 0) return;
      PhaseClock range_clock("dedup: the range of GPU", static_cast<int>(d));
      const cuda::DeviceGuard guard(devices[d]);
      const cuda::Stream stream;
      const cudaStream_t st = stream.get();
      SpreadBuffers& b = buffers[d];
      if (count > b.range_pairs.size()) b.make_range(count);  // (past the samples' bound: rare)
      std::size_t at = 0;
      for (std::size_t w = 0; w < gpus; ++w) {
        const std::size_t from = cuts[w][d], n = cuts[w][d + 1] - from;
        if (n == 0) continue;
        SIMKIT_CUDA_CHECK(cudaMemcpyPeerAsync(b.range_pairs.get() + at, devices[d], buffers[w].sorted_pairs + from,
                                              devices[w], n * 8, st));
        SIMKIT_CUDA_CHECK(cudaMemcpyPeerAsync(b.range_scores.get() + at, devices[d], buffers[w].sorted_scores + from,
                                              devices[w], n * 4, st));
        at += n;
      }
      cub::DoubleBuffer<std::uint64_t> pair_buffers(b.range_pairs.get(), b.range_pairs_other.get());
      cub::DoubleBuffer<std::int32_t> score_buffers(b.range_scores.get(), b.range_scores_other.get());
      sort_matches(pair_buffers, score_buffers, count, index_bits, b.scratch, st);
      if (range_clock.on()) {
        stream.sync();
        range_clock.mark("gathered and sorted");
      }
      packed_down(pair_buffers.Current(), score_buffers.Current(), count, b.packed.get(), run.data() + begin[d], st);
      range_clock.mark("copied down");
    });
    clock.mark("each range gathered, sorted and brought down");
    return run;
  };
  std::optional<MatchList> run;
  try {
    run = spread();
  } catch (...) {
    if (answer.valid()) answer.wait();  // (its thread ends before what it would fault in goes)
    free_all();
    throw;
  }
  free_all();
  return run;
}

// What the host knows of each position's group: where it ends, and the group of twice
// its block size.
struct Layout {
  std::vector<std::uint32_t> group_end, double_begin, double_end;
  std::vector<std::uint32_t> level;  // [position][part]
  std::vector<std::uint64_t> block_size;
  bool fits = true;
};

Layout layout(const CompatibleGroups& groups) {
  const std::size_t n = groups.order().size();
  Layout out;
  out.group_end.resize(n);
  out.double_begin.assign(n, 0);
  out.double_end.assign(n, 0);
  out.level.resize(2 * n);
  out.block_size.resize(n);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> twice(groups.groups().size(), {0, 0});
  for (const auto& m : groups.meetings())
    if (!m.same()) twice[m.x] = {groups.groups()[m.y].begin, groups.groups()[m.y].end};
  std::map<std::uint64_t, std::uint32_t> ids;
  const auto id = [&](std::uint64_t size) { return ids.emplace(size, static_cast<std::uint32_t>(ids.size())).first->second; };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> levels(groups.groups().size());
  for (std::size_t g = 0; g < groups.groups().size(); ++g)  // (the block size doubled wraps past 2^64, as compare()'s)
    levels[g] = {id(groups.groups()[g].block_size), id(groups.groups()[g].block_size * 2)};
  tbb::parallel_for(std::size_t{0}, groups.groups().size(), [&](std::size_t g) {
    const auto& group = groups.groups()[g];
    for (std::uint32_t k = group.begin; k < group.end; ++k) {
      out.group_end[k] = group.end;
      std::tie(out.double_begin[k], out.double_end[k]) = twice[g];
      std::tie(out.level[2 * k], out.level[2 * k + 1]) = levels[g];
      out.block_size[k] = group.block_size;
    }
  });
  out.fits = ids.size() < kMaxLevels;
  return out;
}

// The index's device memory: keys and owners twice (the sort), flags, runs, and a
// chunk's counts and offsets for each key; the signatures' codes, lengths, block sizes and
// counts; CUB's scratch. A candidate pair: three 8-byte keys (sort, unique), row marks,
// and a match (pair and score) twice (their sort).
constexpr std::size_t kKeyBytes = 2 * 8 + 2 * 4 + 1 + 4 + 4 + 8 + 8;
constexpr std::size_t kSignatureBytes = 2 * sizeof(PartCodes) + 2 + 2 * 4 + 8 + 4 + 8 + 8 + 1;
constexpr std::size_t kPairBytes = 3 * 8 + 3 * 4 + 2 * (8 + 4);

std::size_t index_bytes(std::uint64_t keys, std::size_t signatures) {
  return keys * kKeyBytes + signatures * kSignatureBytes + (std::size_t{64} << 20);
}

std::uint64_t key_count(const std::vector<ctph::Prepared>& signatures) {
  std::uint64_t keys = 0;
  for (const ctph::Prepared& s : signatures)
    keys += 1 + grams(static_cast<unsigned>(s.first.text.size())) + grams(static_cast<unsigned>(s.second.text.size()));
  return keys;
}


}  // namespace

struct IndexPlan {
  explicit IndexPlan(const std::vector<std::uint64_t>& block_sizes) : groups(block_sizes) {}
  CompatibleGroups groups;
  gpu::CodeVector codes;               // [position][part]
  std::vector<unsigned char> lengths;  // [position][part]
  Layout at;
  std::vector<std::uint64_t> offset;  // position k's keys: [offset[k], offset[k + 1])
  PageLockedOnce codes_locked;  // (lock_codes_once; unlocked with the plan)
};

std::shared_ptr<const IndexPlan> plan_index(const std::vector<ctph::Prepared>& signatures) {
  const std::size_t n = signatures.size();
  if (n >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) return nullptr;
  std::vector<std::uint64_t> sizes(n);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) { sizes[i] = signatures[i].block_size; });
  auto plan = std::make_shared<IndexPlan>(sizes);
  if (!gpu::encode(signatures, plan->groups.order(), plan->codes, plan->lengths)) return nullptr;
  plan->at = layout(plan->groups);
  if (!plan->at.fits) return nullptr;
  std::vector<std::uint64_t>& offset = plan->offset;
  offset.assign(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k)
    offset[k + 1] = offset[k] + 1 + grams(plan->lengths[2 * k]) + grams(plan->lengths[2 * k + 1]);
  if (offset[n] >= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) return nullptr;
  return plan;
}

namespace {

// Whether an index of `keys` keys over `signatures` signatures fits half this process's
// share of device `device`'s free memory.
bool index_fits(std::uint64_t keys, std::size_t signatures, int device) {
  if (keys >= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) return false;
  const cuda::DeviceGuard guard(device);
  return index_bytes(keys, signatures) <= device_memory_share() / 2;
}

// The codes page-locked by the first to upload them, or ahead (every GPU's upload then
// runs at the link's rate, not the driver's staging rate); unlocked with the plan.
void lock_codes_once(const IndexPlan& plan) {
  cuda::lock_once(plan.codes_locked, {{plan.codes.data(), plan.codes.size() * sizeof(PartCodes)}});
}

}  // namespace

std::size_t device_memory_share() {
  std::size_t free_bytes = 0, total_bytes = 0;
  SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes / static_cast<std::size_t>(std::max(1, cluster::local_size()));
}

void lock_codes(const IndexPlan& plan, int device) {
  const cuda::DeviceGuard guard(device);
  lock_codes_once(plan);
}

std::pair<std::size_t, std::size_t> index_room(const IndexPlan& plan, int device, std::size_t budget) {
  const std::size_t bytes = index_bytes(plan.offset.back(), plan.offset.size() - 1);
  if (budget != 0) return {bytes, budget};
  const cuda::DeviceGuard guard(device);
  return {bytes, device_memory_share() / 2};
}

bool index_fits_gpu(const IndexPlan& plan, int device, std::size_t budget) {
  const auto [bytes, room] = index_room(plan, device, budget);
  return bytes <= room;
}

std::size_t pair_budget_within(const IndexPlan& plan, std::size_t budget) {
  const std::size_t needed = index_bytes(plan.offset.back(), plan.offset.size() - 1);
  return std::max<std::size_t>((budget > needed ? budget - needed : 0) / kPairBytes, 1);
}

bool index_fits_gpu(const std::vector<ctph::Prepared>& signatures, int device) {
  return index_fits(key_count(signatures), signatures.size(), device);
}

std::optional<MatchList> match_indexed_gpu(const std::vector<ctph::Prepared>& signatures, int threshold,
                                           int device, double* device_ms, Share share,
                                           std::size_t pair_budget, StepTimes* steps) {
  if (device_ms != nullptr) *device_ms = 0;
  const auto start = std::chrono::steady_clock::now();
  const std::shared_ptr<const IndexPlan> plan = plan_index(signatures);
  if (steps != nullptr)
    steps->emplace_back("groups and codes (host)",
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (plan == nullptr) return std::nullopt;
  return match_indexed_gpu(*plan, threshold, device, device_ms, share, pair_budget, steps);
}

MatchList match_indexed_gpu(const IndexPlan& plan, int threshold, int device, double* device_ms, Share share,
                            std::size_t pair_budget, StepTimes* steps) {
  auto runs = match_indexed_runs(plan, threshold, device, device_ms, share, nullptr, pair_budget, steps);
  const auto start = std::chrono::steady_clock::now();
  MatchList all = merge_sorted_runs(std::move(runs));
  if (steps != nullptr)
    steps->emplace_back("matches as the caller's",
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return all;
}

namespace {

// match_indexed_runs; with `left`, a dealt worker's matches not yet brought down are left
// there, on its device, for the caller to gather.
std::vector<MatchList> worker_runs(const IndexPlan& plan, int threshold, int device, double* device_ms,
                                   Share share, RowDealer* dealer, std::size_t pair_budget, StepTimes* steps,
                                   std::deque<Waiting>* left, bool first_worker) {
  threshold = std::clamp(threshold, 1, 100);
  PhaseClock clock("dedup worker", device);
  auto last = std::chrono::steady_clock::now();
  const auto step = [&](const char* name) {
    clock.mark(name);
    if (steps == nullptr) return;
    const auto now = std::chrono::steady_clock::now();
    steps->emplace_back(name, std::chrono::duration<double>(now - last).count());
    last = now;
  };
  if (device_ms != nullptr) *device_ms = 0;
  const CompatibleGroups& groups = plan.groups;
  const Layout& at = plan.at;
  const std::size_t n = groups.order().size();
  if (n < 2) return {};
  // A worker whose GPU came late to a dealt job that is done, or whose GPU cannot hold
  // the index, leaves the rows to the others (not the first: the caller checked its GPU,
  // and a job none takes would be left undone).
  if (dealer != nullptr && (dealer->done() || (!first_worker && !index_fits_gpu(plan, device)))) return {};
  const std::uint64_t entries = plan.offset[n];
  const auto e_count = static_cast<std::uint32_t>(entries);

  const cuda::DeviceGuard guard(device);
  const std::size_t mine = device_memory_share(), needed = index_bytes(entries, n);
  if (pair_budget == 0) pair_budget = (mine > needed ? mine - needed : 0) / 2 / kPairBytes;
  pair_budget = std::min<std::size_t>(pair_budget, std::numeric_limits<std::int32_t>::max() / 2);

  const cuda::Stream stream;
  const cudaStream_t st = stream.get();
  cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
  lock_codes_once(plan);
  clock.mark("the device readied, the codes page-locked");
  const auto d_codes = upload(plan.codes, st);
  const auto d_lengths = upload(plan.lengths, st);
  const auto d_levels = upload(at.level, st);
  const auto d_sizes = upload(at.block_size, st);
  const auto d_index = upload(groups.order(), st);
  const auto d_offset = upload(plan.offset, st);
  const Signatures sig{d_codes.get(), d_lengths.get(), d_levels.get(), d_sizes.get(), d_index.get()};
  start.record(st);
  if (steps != nullptr) stream.sync();
  step("device memory and uploads");

  // 1. The keys, sorted, a signature's repeats dropped.
  Scratch scratch;
  cuda::DeviceBuffer<std::uint64_t> keys(entries), keys_other(entries);
  cuda::DeviceBuffer<std::uint32_t> owner(entries), owner_other(entries);
  cuda::DeviceBuffer<int> selected(1);
  make_keys<<<grid_for(n), 256, 0, st>>>(sig, static_cast<std::uint32_t>(n), d_offset.get(), keys.get(), owner.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  cub::DoubleBuffer<std::uint64_t> key_buffers(keys.get(), keys_other.get());
  cub::DoubleBuffer<std::uint32_t> owner_buffers(owner.get(), owner_other.get());
  std::size_t bytes = 0;
  SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, key_buffers, owner_buffers, e_count, 0, 64, st));
  SIMKIT_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(scratch.at(bytes), bytes, key_buffers, owner_buffers, e_count, 0, 64, st));
  cuda::DeviceBuffer<std::uint8_t> keep(entries);
  mark_repeats<<<grid_for(entries), 256, 0, st>>>(key_buffers.Current(), owner_buffers.Current(), e_count, keep.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  std::uint64_t* d_keys = key_buffers.Alternate();
  std::uint32_t* d_owner = owner_buffers.Alternate();
  SIMKIT_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, key_buffers.Current(), keep.get(), d_keys,
                                               selected.get(), e_count, st));
  SIMKIT_CUDA_CHECK(cub::DeviceSelect::Flagged(scratch.at(bytes), bytes, key_buffers.Current(), keep.get(), d_keys,
                                               selected.get(), e_count, st));
  SIMKIT_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, owner_buffers.Current(), keep.get(), d_owner,
                                               selected.get(), e_count, st));
  SIMKIT_CUDA_CHECK(cub::DeviceSelect::Flagged(scratch.at(bytes), bytes, owner_buffers.Current(), keep.get(), d_owner,
                                               selected.get(), e_count, st));
  const auto kept = static_cast<std::uint32_t>(read_back(selected.get(), st));
  step("keys made and sorted");

  // Each key's run: run[e] its number + 1, run_end[run - 1] where it ends.
  std::uint32_t* d_head = reinterpret_cast<std::uint32_t*>(key_buffers.Current());  // free now: 8 bytes an entry
  std::uint32_t* d_run = owner_buffers.Current();
  cuda::DeviceBuffer<std::uint32_t> run_end(entries);
  mark_heads<<<grid_for(kept), 256, 0, st>>>(d_keys, kept, d_head);
  SIMKIT_CUDA_CHECK_LAUNCH();
  SIMKIT_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, d_head, d_run, kept, st));
  SIMKIT_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scratch.at(bytes), bytes, d_head, d_run, kept, st));
  mark_run_ends<<<grid_for(kept), 256, 0, st>>>(d_keys, d_run, kept, run_end.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  keys = {};  // the keys are not needed past here, nor their sorted copy's twin
  keys_other = {};
  d_keys = nullptr;

  // 2. How each signature meets its later ones: through its keys, or directly.
  cuda::DeviceBuffer<unsigned long long> d_listed(n);
  SIMKIT_CUDA_CHECK(cudaMemsetAsync(d_listed.get(), 0, n * sizeof(unsigned long long), st));
  count_listed<<<grid_for(kept), 256, 0, st>>>(d_owner, d_run, run_end.get(), kept, d_listed.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  std::vector<unsigned long long> listed(n);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(listed.data(), d_listed.get(), n * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, st));
  stream.sync();
  std::vector<std::uint8_t> direct(n, 0);
  std::vector<std::uint64_t> candidates(n + 1, 0);  // prefix sums of each row's candidates
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t later = (at.group_end[k] - k - 1) + (at.double_end[k] - at.double_begin[k]);
    direct[k] = listed[k] >= later;
    candidates[k + 1] = candidates[k] + (direct[k] ? later : listed[k]);
  }
  const auto d_direct = upload(direct, st);
  step("runs and each row's candidates");

  // This worker's rows: a contiguous run of positions holding its share of the candidates.
  const auto row_at = [&](std::size_t part) {
    if (part == 0) return std::size_t{0};
    if (part >= share.parts) return n;
    const std::uint64_t target = static_cast<std::uint64_t>(
        static_cast<long double>(candidates[n]) * static_cast<long double>(part) / static_cast<long double>(share.parts));
    return static_cast<std::size_t>(std::lower_bound(candidates.begin(), candidates.end(), target) - candidates.begin());
  };
  const std::size_t held = dealer != nullptr ? dealer->held : 1;
  const std::size_t first_row = std::min(row_at(share.part), n), last_row = std::min(row_at(share.part + held), n);

  // 3. A chunk of rows at a time.
  const int column_bits = bit_width_of(n - 1);
  std::size_t largest = 0;
  for (std::size_t k = first_row; k < last_row; ++k) largest = std::max<std::size_t>(largest, candidates[k + 1] - candidates[k]);
  pair_budget = std::max(pair_budget, largest);
  cuda::DeviceBuffer<std::uint64_t> entry_count(kept > 0 ? kept : 1), entry_at(kept > 0 ? kept : 1);
  cuda::DeviceBuffer<std::uint64_t> pair_space, unique;  // the candidates and their sort's twin, one after the other
  cuda::DeviceBuffer<std::uint32_t> row_head, row_number, row_start;
  cuda::DeviceBuffer<std::uint64_t> match_pair, match_pair_other;
  cuda::DeviceBuffer<std::int32_t> match_score, match_score_other;
  cuda::DeviceBuffer<unsigned long long> d_found(1);
  std::vector<MatchList> runs;  // the matches, each run sorted
  const int index_bits = 32 + bit_width_of(n - 1);
  // A dealt worker keeps its chunks' matches on the device, unsorted, and brings them down
  // as one run once its pieces are done (or once they pass a quarter of the chunks'
  // budget): the host then merges a run a worker, not a run a piece.
  std::deque<Waiting> waiting;
  std::size_t waiting_matches = 0;
  const std::size_t waiting_limit = std::max<std::size_t>(pair_budget / 4, 1);
  const auto bring_down_waiting = [&] {
    if (waiting_matches == 0) return;
    runs.push_back(gather_down({{device, &waiting}}, device, index_bits, scratch, st));
    waiting.clear();  // (brought down: the stream is idle)
    waiting_matches = 0;
  };
  // Rows [lo, hi), their candidates within the budget: their matches brought down as a
  // run, or left waiting on the device (a dealt worker).
  const auto score_chunk = [&](std::size_t lo, std::size_t hi) {
    const std::uint64_t total = candidates[hi] - candidates[lo];
    const auto lo32 = static_cast<std::uint32_t>(lo), hi32 = static_cast<std::uint32_t>(hi);
    if (total == 0) return;
    if (pair_space.size() < 2 * total) {
      pair_space = {};
      unique = {};
      row_head = {};
      row_number = {};
      row_start = {};
      match_pair = {};
      match_pair_other = {};
      match_score = {};
      match_score_other = {};
      pair_space = cuda::DeviceBuffer<std::uint64_t>(2 * total);
      unique = cuda::DeviceBuffer<std::uint64_t>(total);
      row_head = cuda::DeviceBuffer<std::uint32_t>(total);
      row_number = cuda::DeviceBuffer<std::uint32_t>(total);
      row_start = cuda::DeviceBuffer<std::uint32_t>(total);
      match_pair = cuda::DeviceBuffer<std::uint64_t>(total);
      match_pair_other = cuda::DeviceBuffer<std::uint64_t>(total);
      match_score = cuda::DeviceBuffer<std::int32_t>(total);
      match_score_other = cuda::DeviceBuffer<std::int32_t>(total);
    }
    std::uint64_t* const pairs = pair_space.get();
    std::uint64_t* const pairs_other = pairs + total;
    // The candidates through keys, then the direct rows' after them.
    std::uint64_t through_keys = 0;
    std::vector<DirectRow> direct_rows;
    for (std::size_t k = lo; k < hi; ++k)
      if (!direct[k]) through_keys += listed[k];
    std::uint64_t next = through_keys;
    for (std::size_t k = lo; k < hi; ++k) {
      if (!direct[k] || candidates[k + 1] == candidates[k]) continue;
      direct_rows.push_back({static_cast<std::uint32_t>(k), at.group_end[k], at.double_begin[k], at.double_end[k], next});
      next += candidates[k + 1] - candidates[k];
    }
    if (through_keys > 0) {
      count_candidates<<<grid_for(kept), 256, 0, st>>>(d_owner, d_run, run_end.get(), d_direct.get(), kept, lo32, hi32,
                                                       entry_count.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
      SIMKIT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, entry_count.get(), entry_at.get(), kept, st));
      SIMKIT_CUDA_CHECK(
          cub::DeviceScan::ExclusiveSum(scratch.at(bytes), bytes, entry_count.get(), entry_at.get(), kept, st));
      write_candidates<<<grid_for(kept), 256, 0, st>>>(d_owner, d_run, run_end.get(), d_direct.get(), kept, lo32, hi32,
                                                       entry_at.get(), column_bits, pairs);
      SIMKIT_CUDA_CHECK_LAUNCH();
    }
    if (!direct_rows.empty()) {
      const auto d_rows = upload(direct_rows, st);
      write_direct<<<static_cast<unsigned>(direct_rows.size()), 256, 0, st>>>(d_rows.get(), lo32, column_bits,
                                                                               pairs);
      SIMKIT_CUDA_CHECK_LAUNCH();
      stream.sync();  // d_rows is freed at the end of this scope
    }
    // Sorted and made unique: (row, column) keys, the row relative to the chunk.
    const auto count = static_cast<int>(total);
    const int end_bit = column_bits + bit_width_of(hi - lo - 1);
    cub::DoubleBuffer<std::uint64_t> pair_buffers(pairs, pairs_other);
    SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, pair_buffers, count, 0, end_bit, st));
    SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(scratch.at(bytes), bytes, pair_buffers, count, 0, end_bit, st));
    SIMKIT_CUDA_CHECK(
        cub::DeviceSelect::Unique(nullptr, bytes, pair_buffers.Current(), unique.get(), selected.get(), count, st));
    SIMKIT_CUDA_CHECK(cub::DeviceSelect::Unique(scratch.at(bytes), bytes, pair_buffers.Current(), unique.get(),
                                                selected.get(), count, st));
    const auto distinct = static_cast<std::uint32_t>(read_back(selected.get(), st));
    // Where each row's columns start, then the rows scored.
    mark_rows<<<grid_for(distinct), 256, 0, st>>>(unique.get(), distinct, column_bits, row_head.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    SIMKIT_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, row_head.get(), row_number.get(), distinct, st));
    SIMKIT_CUDA_CHECK(
        cub::DeviceScan::InclusiveSum(scratch.at(bytes), bytes, row_head.get(), row_number.get(), distinct, st));
    mark_row_starts<<<grid_for(distinct), 256, 0, st>>>(row_head.get(), row_number.get(), distinct, row_start.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    const std::uint32_t rows = read_back(row_number.get() + distinct - 1, st);
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(d_found.get(), 0, sizeof(unsigned long long), st));
    const unsigned blocks = std::min<unsigned>((rows + kWarps - 1) / kWarps, 65535u * 8);
    score_rows<<<blocks, 32 * kWarps, 0, st>>>(sig, unique.get(), row_start.get(), rows, distinct, lo32, column_bits,
                                               threshold, match_pair.get(), match_score.get(), d_found.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    const auto hits = static_cast<std::size_t>(read_back(d_found.get(), st));
    if (dealer != nullptr && hits <= waiting_limit) {  // (those before it come down first if both would pass it)
      if (waiting_matches + hits > waiting_limit) bring_down_waiting();
      if (hits > 0) {
        Waiting& w = waiting.emplace_back(Waiting{cuda::DeviceBuffer<std::uint64_t>(hits), cuda::DeviceBuffer<std::int32_t>(hits)});
        SIMKIT_CUDA_CHECK(cudaMemcpyAsync(w.pairs.get(), match_pair.get(), hits * sizeof(std::uint64_t),
                                          cudaMemcpyDeviceToDevice, st));
        SIMKIT_CUDA_CHECK(cudaMemcpyAsync(w.scores.get(), match_score.get(), hits * sizeof(std::int32_t),
                                          cudaMemcpyDeviceToDevice, st));
        waiting_matches += hits;
      }
      return;
    }
    // The chunk's matches a run of their own (also a dealt chunk too large to wait),
    // written over the candidates' space (free now: 16 bytes a candidate hold a 12-byte
    // match).
    if (hits > 0)
      runs.push_back(sorted_down({match_pair.get(), match_pair_other.get()}, {match_score.get(), match_score_other.get()},
                                 hits, index_bits, reinterpret_cast<gpu::DeviceMatch*>(pair_space.get()), scratch, st));
  };
  // Rows [begin, end) in chunks of at most the budget's candidates.
  const auto score_rows_of = [&](std::size_t begin, std::size_t end) {
    for (std::size_t lo = begin; lo < end;) {
      std::size_t hi = lo + 1;
      while (hi < end && candidates[hi + 1] - candidates[lo] <= pair_budget) ++hi;
      score_chunk(lo, hi);
      lo = hi;
    }
  };
  if (dealer == nullptr) {
    score_rows_of(first_row, last_row);
  } else {
    // Piece p: the rows from where the share's candidates pass p / pieces of its total.
    const auto piece_at = [&](std::size_t p) {
      const auto target = candidates[first_row] +
                          static_cast<std::uint64_t>(static_cast<long double>(candidates[last_row] - candidates[first_row]) *
                                                     static_cast<long double>(p) / static_cast<long double>(dealer->pieces));
      const auto row = std::lower_bound(candidates.begin() + first_row, candidates.begin() + last_row, target);
      return p >= dealer->pieces ? last_row : static_cast<std::size_t>(row - candidates.begin());
    };
    for (std::size_t p; (p = dealer->next.fetch_add(1)) < dealer->pieces;) score_rows_of(piece_at(p), piece_at(p + 1));
    if (left != nullptr) *left = std::move(waiting);
    else bring_down_waiting();
  }
  stop.record(st);
  stream.sync();
  step("candidates made, sorted, scored");
  if (device_ms != nullptr) *device_ms = cuda::elapsed_ms(start, stop);
  return runs;
}

}  // namespace

std::vector<MatchList> match_indexed_runs(const IndexPlan& plan, int threshold, int device,
                                          double* device_ms, Share share, RowDealer* dealer,
                                          std::size_t pair_budget, StepTimes* steps) {
  return worker_runs(plan, threshold, device, device_ms, share, dealer, pair_budget, steps, nullptr, false);
}

MatchList match_indexed_dealt(const IndexPlan& plan, int threshold, const std::vector<int>& devices,
                              Share share, std::vector<double>& device_ms, std::size_t pair_budget) {
  RowDealer dealer;
  dealer.held = devices.size();
  dealer.pieces = kPiecesAGpu * devices.size();
  std::vector<std::vector<MatchList>> found(devices.size());
  std::vector<std::deque<Waiting>> left(devices.size());
  device_ms.assign(devices.size(), 0);
  run_parts(devices.size(), [&](std::size_t w) {
    try {
      found[w] = worker_runs(plan, threshold, devices[w], &device_ms[w], share, &dealer, pair_budget, nullptr, &left[w],
                             w == 0);
    } catch (...) {
      dealer.next.store(dealer.pieces);  // the others stop at their next piece
      throw;
    }
  });
  const std::size_t n = plan.groups.order().size();
  if (n >= 2 && !dealer.done()) throw Failure("the GPUs' matcher left rows unscored");  // (a guard: the first takes all)
  PhaseClock clock("dedup");
  std::vector<MatchList> runs = flatten(std::move(found));
  // The matches left on the GPUs: spread over them in ranges, each sorted and brought
  // down by its GPU (as one run, all GPUs at once), or (one GPU, or where they do not
  // fit) each GPU's sorted on it and the runs merged here.
  const int index_bits = 32 + bit_width_of(n > 0 ? n - 1 : 0);
  if (std::optional<MatchList> spread = spread_down(devices, left, index_bits)) {
    runs.push_back(std::move(*spread));
  } else {
    std::vector<MatchList> each(devices.size());
    run_parts(devices.size(), [&](std::size_t w) {
      const cuda::DeviceGuard guard(devices[w]);
      const cuda::Stream stream;
      Scratch scratch;
      each[w] = gather_down({{devices[w], &left[w]}}, devices[w], index_bits, scratch, stream.get());
    });
    for (auto& run : each) runs.push_back(std::move(run));
  }
  for (std::size_t w = 0; w < devices.size(); ++w) {  // each GPU's memory freed with it current
    const cuda::DeviceGuard guard(devices[w]);
    left[w].clear();
  }
  clock.mark("the GPUs' matches gathered");
  return merge_sorted_runs(std::move(runs));
}

}  // namespace simkit::dedup
