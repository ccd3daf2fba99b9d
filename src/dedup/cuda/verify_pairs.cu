// Edit distances of pairs of documents on the GPU (distances_within_gpu in
// dedup/edit_distance.hpp), for the edit-rate pipeline's verification. One warp a pair,
// taken from a shared counter (the caller orders the pairs longest first): the common
// prefix and suffix are skipped 32 bytes a step, then the distance is computed in a
// diagonal band (dedup/edit_detail.hpp) that slides down the pattern one row a text
// character, lane w holding the band's 64-bit word w. The band starts one word wide and
// doubles while the pair's limit asks for more, up to 32 words (Ukkonen's doubling: most
// pairs verified are far closer than their limit). distance_in_diagonal_band is the same
// computation on the CPU, step for step.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/staged_copy.hpp"
#include "dedup/edit_detail.hpp"
#include "dedup/edit_distance.hpp"

namespace simkit::dedup {

namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr unsigned kAll = 0xffffffffu;
constexpr int kMaxWords = (kGpuBandEdits + 1) / 64;
static_assert(kMaxWords == kWarp, "a lane a word of the widest band");

struct Job {
  const char* chars;
  const std::uint64_t* offsets;  // text i is chars[offsets[i], offsets[i + 1])
  const TextPair* pairs;
  std::uint32_t count;
  std::uint32_t* out;
  unsigned* next;  // the next pair a warp takes
};

// The length of the common run of a and b read forwards (step 1) or backwards (step -1)
// from their first bytes, at most n.
__device__ std::uint64_t common_run(const char* a, const char* b, std::uint64_t n, int step, int lane) {
  for (std::uint64_t at = 0; at < n; at += kWarp) {
    const std::uint64_t i = at + static_cast<std::uint64_t>(lane);
    const auto offset = static_cast<std::int64_t>(i) * step;
    const unsigned differ = __ballot_sync(kAll, i >= n || a[offset] != b[offset]);
    if (differ != 0) return min(n, at + static_cast<std::uint64_t>(__ffs(static_cast<int>(differ)) - 1));
  }
  return n;
}

// The distance of pattern (m > 0 bytes) and text (n >= m) in a band of `words` words when
// at most k (<= 64 words - 1, >= n - m), else kBeyond. Every lane of the warp calls it.
// kOneWord (words == 1): every lane holds the one word, and no lane waits on another but
// for the match ballots.
template <bool kOneWord>
__device__ std::uint32_t band_distance(const char* pattern, std::int64_t m, const char* text, std::int64_t n,
                                       std::int64_t k, int words, int lane) {
  const std::int64_t bits = std::int64_t{64} * words, gap = n - m;
  const std::int64_t above = detail::band_above(bits, gap);
  const int word = kOneWord ? 0 : lane;
  const bool active = word < words;
  const std::int64_t first = std::int64_t{64} * word;  // this lane's first bit
  const std::int64_t made_up = min(max(above - first + 1, std::int64_t{0}), std::int64_t{64});
  std::uint64_t mv = !active ? 0 : made_up == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << made_up) - 1;
  std::uint64_t pv = active ? ~mv : 0;
  std::int64_t top = above;  // D at the window's top row, the same in every lane
  const auto k_rows = detail::band_bits_within(above, gap, k);
  // The lanes' parts of a sum over the band's bits.
  const auto band_sum = [](int part) { return kOneWord ? part : __reduce_add_sync(kAll, part); };
  int chunk = 0;  // text bytes j-1 .. j+30, one a lane
  for (std::int64_t j = 1; j <= n; ++j) {
    const int slot = static_cast<int>((j - 1) % kWarp);
    if (slot == 0) chunk = j - 1 + lane < n ? static_cast<unsigned char>(text[j - 1 + lane]) : 0;
    const auto c = static_cast<char>(__shfl_sync(kAll, chunk, slot));
    // Down one row: bit 0 of the word below enters at bit 63; below the band a +1 step.
    unsigned below = 1;
    if constexpr (!kOneWord) {
      below = __shfl_down_sync(kAll, static_cast<unsigned>(pv & 1) | static_cast<unsigned>(mv & 1) << 1, 1);
      if (lane == words - 1) below = 1;
    }
    pv = (pv >> 1) | std::uint64_t{below & 1} << 63;
    mv = (mv >> 1) | std::uint64_t{below >> 1} << 63;
    // The rows matching c, 32 a ballot: half h of the band is rows row0 + 32h + lane.
    std::uint64_t eq = 0;
    const std::int64_t row0 = j - above;
    for (int half = 0; half < 2 * words; ++half) {
      const std::int64_t row = row0 + 32 * half + lane;
      const unsigned got = __ballot_sync(kAll, row >= 1 && row <= m && pattern[row - 1] == c);
      if (half >> 1 == word) eq |= std::uint64_t{got} << (32 * (half & 1));
    }
    if (!active) pv = mv = eq = 0;
    // Myers/Hyyrö's step over all words; the addition's carries looked ahead by ballot.
    const std::uint64_t x = eq & pv;
    std::uint64_t sum = x + pv;
    if constexpr (!kOneWord) {
      const unsigned generate = __ballot_sync(kAll, active && sum < x);
      const unsigned propagate = __ballot_sync(kAll, active && sum == ~std::uint64_t{0});
      sum += (detail::word_carries(generate, propagate) >> lane) & 1;
    }
    const std::uint64_t xv = eq | mv, xh = (sum ^ pv) | eq;
    std::uint64_t ph = mv | ~(xh | pv), mh = pv & xh;
    // Up one bit: bit 63 of the word above enters at bit 0; above the band a +1 step.
    unsigned from = 1;
    if constexpr (!kOneWord) {
      from = __shfl_up_sync(kAll, static_cast<unsigned>(ph >> 63) | static_cast<unsigned>(mh >> 63) << 1, 1);
      if (lane == 0) from = 1;
    }
    ph = (ph << 1) | std::uint64_t{from & 1};
    mh = (mh << 1) | std::uint64_t{from >> 1};
    pv = active ? mh | ~(xv | ph) : 0;
    mv = active ? ph & xv : 0;
    unsigned top_step = static_cast<unsigned>(pv & 1) | static_cast<unsigned>(mv & 1) << 1;
    if constexpr (!kOneWord) top_step = __shfl_sync(kAll, top_step, 0);
    top += 1 + static_cast<std::int64_t>(top_step & 1) - static_cast<std::int64_t>(top_step >> 1);
    if (j % kWarp == 0) {  // Ukkonen's cut-off: every cell of the diagonals that matter above k
      const auto part = static_cast<int>(detail::band_bound_part(pv, mv, first, k_rows.first, k_rows.second));
      if (top + band_sum(part) > k) return kBeyond;
    }
  }
  // Row m is bit above - gap: add the steps of bits 1 .. that one to the top.
  const auto part = static_cast<int>(detail::band_bound_part(pv, mv, first, above - gap, above - gap));
  const std::int64_t d = top + band_sum(part);
  return d <= k ? static_cast<std::uint32_t>(d) : kBeyond;
}

__global__ void __launch_bounds__(kThreads) verify_kernel(Job job) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  for (;;) {
    unsigned p = 0;
    if (lane == 0) p = atomicAdd(job.next, 1u);
    p = __shfl_sync(kAll, p, 0);
    if (p >= job.count) return;
    const TextPair pair = job.pairs[p];
    const char* a = job.chars + job.offsets[pair.a];
    const char* b = job.chars + job.offsets[pair.b];
    std::uint64_t la = job.offsets[pair.a + 1] - job.offsets[pair.a], lb = job.offsets[pair.b + 1] - job.offsets[pair.b];
    const std::uint64_t prefix = common_run(a, b, min(la, lb), 1, lane);
    a += prefix;
    b += prefix;
    la -= prefix;
    lb -= prefix;
    const std::uint64_t suffix = la == 0 || lb == 0 ? 0 : common_run(a + la - 1, b + lb - 1, min(la, lb), -1, lane);
    la -= suffix;
    lb -= suffix;
    const char* pattern = la <= lb ? a : b;
    const char* text = la <= lb ? b : a;
    const auto m = static_cast<std::int64_t>(min(la, lb)), n = static_cast<std::int64_t>(max(la, lb));
    const std::int64_t limit = min(pair.limit, kGpuBandEdits);
    std::uint32_t result = kBeyond;
    if (n - m <= limit) {
      if (m == 0) {
        result = static_cast<std::uint32_t>(n);
      } else {
        for (int words = 1; words <= kMaxWords; words *= 2) {
          const std::int64_t k = min(limit, std::int64_t{64} * words - 1);
          if (n - m <= k)
            result = words == 1 ? band_distance<true>(pattern, m, text, n, k, 1, lane)
                                : band_distance<false>(pattern, m, text, n, k, words, lane);
          if (result != kBeyond || k == limit) break;
        }
      }
    }
    if (lane == 0) job.out[p] = result;
  }
}

// Texts from this size go through pinned buffers (cuda::StagedCopy); below it, making
// those buffers costs more than the driver's own staging.
constexpr std::size_t kStagedBytes = std::size_t{64} << 20;

// The most bytes of texts on the device at once, unless the caller says.
std::size_t automatic_budget() {
  std::size_t free = 0, total = 0;
  SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return std::max<std::size_t>(std::min(free / 2, std::size_t{4} << 30), std::size_t{64} << 20);
}

// Pairs [begin, end) and the texts they name, packed anew (text indices renumbered).
struct Chunk {
  std::vector<char> chars;
  std::vector<std::uint64_t> offsets{0};
  std::vector<TextPair> pairs;
};

// The pairs from `begin` whose texts together fit `budget` bytes (at least one pair).
Chunk next_chunk(const char* chars, const std::vector<std::uint64_t>& offsets, const std::vector<TextPair>& pairs,
                 std::size_t begin, std::size_t budget, std::vector<std::uint32_t>& renumbered) {
  Chunk chunk;
  std::vector<std::uint32_t> touched;
  const auto place = [&](std::uint32_t text) {
    if (renumbered[text] != kBeyond) return renumbered[text];
    renumbered[text] = static_cast<std::uint32_t>(chunk.offsets.size() - 1);
    touched.push_back(text);
    chunk.chars.insert(chunk.chars.end(), chars + offsets[text], chars + offsets[text + 1]);
    chunk.offsets.push_back(chunk.chars.size());
    return renumbered[text];
  };
  for (std::size_t p = begin; p < pairs.size(); ++p) {
    const TextPair& pair = pairs[p];
    std::size_t more = 0;
    for (const std::uint32_t t : {pair.a, pair.b})
      if (renumbered[t] == kBeyond) more += offsets[t + 1] - offsets[t];
    if (!chunk.pairs.empty() && chunk.chars.size() + more > budget) break;
    chunk.pairs.push_back({place(pair.a), place(pair.b), pair.limit});
  }
  for (const std::uint32_t t : touched) renumbered[t] = kBeyond;
  return chunk;
}

}  // namespace

std::vector<std::uint32_t> distances_within_gpu(const char* chars, const std::vector<std::uint64_t>& offsets,
                                                const std::vector<TextPair>& pairs, int device, double* device_ms,
                                                std::size_t text_budget) {
  if (device_ms != nullptr) *device_ms = 0;
  std::vector<std::uint32_t> out(pairs.size(), kBeyond);
  if (pairs.empty()) return out;
  const cuda::DeviceGuard guard(device);
  const cuda::Stream stream;
  cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
  const std::size_t budget = text_budget != 0 ? text_budget : automatic_budget();
  const std::uint64_t all_bytes = offsets.back();
  cuda::DeviceBuffer<unsigned> next(1);
  const auto run = [&](const char* host_chars, std::size_t bytes, const std::vector<std::uint64_t>& host_offsets,
                       const TextPair* host_pairs, std::size_t count, std::uint32_t* host_out) {
    cuda::DeviceBuffer<char> d_chars(std::max<std::size_t>(bytes, 1));
    if (bytes >= kStagedBytes) {
      cuda::StagedCopy copier;
      copier.copy(d_chars.get(), host_chars, bytes, stream.get());
    } else if (bytes > 0) {
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(d_chars.get(), host_chars, bytes, cudaMemcpyHostToDevice, stream.get()));
    }
    // On the kernel's stream, so that the kernel follows the copies.
    cuda::DeviceBuffer<std::uint64_t> d_offsets(host_offsets.size());
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(d_offsets.get(), host_offsets.data(), host_offsets.size() * sizeof(std::uint64_t),
                                      cudaMemcpyHostToDevice, stream.get()));
    cuda::DeviceBuffer<TextPair> d_pairs(count);
    SIMKIT_CUDA_CHECK(
        cudaMemcpyAsync(d_pairs.get(), host_pairs, count * sizeof(TextPair), cudaMemcpyHostToDevice, stream.get()));
    cuda::DeviceBuffer<std::uint32_t> d_out(count);
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(next.get(), 0, sizeof(unsigned), stream.get()));
    int per_sm = 0;
    SIMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, verify_kernel, kThreads, 0));
    const std::size_t warps_wanted = (count + kThreads / kWarp - 1) / (kThreads / kWarp);
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(warps_wanted, std::size_t(std::max(per_sm, 1)) * cuda::sm_count()));
    start.record(stream.get());
    verify_kernel<<<blocks, kThreads, 0, stream.get()>>>(
        Job{d_chars.get(), d_offsets.get(), d_pairs.get(), static_cast<std::uint32_t>(count), d_out.get(), next.get()});
    SIMKIT_CUDA_CHECK_LAUNCH();
    stop.record(stream.get());
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(host_out, d_out.get(), count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                      stream.get()));
    stream.sync();
    if (device_ms != nullptr) *device_ms += cuda::elapsed_ms(start, stop);
  };
  if (all_bytes <= budget) {
    run(chars, all_bytes, offsets, pairs.data(), pairs.size(), out.data());
    return out;
  }
  // More text than the device holds at once: chunks of pairs, each with its own texts.
  std::vector<std::uint32_t> renumbered(offsets.size() - 1, kBeyond);
  for (std::size_t begin = 0; begin < pairs.size();) {
    const Chunk chunk = next_chunk(chars, offsets, pairs, begin, budget, renumbered);
    run(chunk.chars.data(), chunk.chars.size(), chunk.offsets, chunk.pairs.data(), chunk.pairs.size(), out.data() + begin);
    begin += chunk.pairs.size();
  }
  return out;
}

void prepare_rate_gpu(int device) {
  // A signature pair and a text pair: every kernel the pipeline runs on a GPU, once.
  StringSet strings;
  strings.add("abcdefgh");
  strings.add("abcdefgx");
  edit_pairs_gpu(strings, strings, true, PairRule{0.5, 0}, EditKernel::bit_parallel, device);
  distances_within_gpu(strings.chars.data(), {0, 8, 16}, {TextPair{0, 1, 4}}, device);
}

}  // namespace simkit::dedup
