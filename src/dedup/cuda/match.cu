// CTPH matching on the GPU (match_all_gpu in simkit/dedup.hpp): through the 7-gram index
// (match_index.cu) where it can be built, else every compatible pair scored, here.
//
// Signatures are grouped by block size; a group meets itself and the group of twice its
// size. A block holds 64 signatures of the x group, one a thread, as bit masks in shared
// memory (mask[c] bit i: character i of the part is c), and streams signatures of the y
// group past them, the same two y for every thread, so the loop is uniform. libfuzzy's
// score is an edit distance with substitutions costing 2, which is la + lb - 2 LCS, and
// the LCS of parts of at most 64 characters is one 64-bit word of bit-parallel steps
// (Hyyro), a 32-bit word where the x parts of a warp have at most 32.
// The common 7-character substring the score also needs is checked the same way, only
// for pairs whose score would pass the threshold.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "dedup/compatible.hpp"
#include "dedup/cuda/ctph_bits.cuh"
#include "dedup/match_gpu.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

namespace {

constexpr int kTile = 64;    // x signatures a block, one a thread
constexpr int kChunk = 512;  // y signatures a block streams
// y signatures a thread meets at once (gpu::lcs): 2 took 34.6 s of device time for every
// pair of a million hashes on an H200, 1 took 36.2 s and 4 took 49.1 s (calls 165-167 of
// bench/results/dedup.md; why four is slower was not profiled).
constexpr int kWays = 2;
constexpr std::size_t kFewestHeld = std::size_t{1} << 18;  // matches a launch may always hold (3 MiB)

using gpu::DeviceMatch;
using gpu::kCodes;
using gpu::PartCodes;

struct Parts {
  const PartCodes* codes;       // [signature][part]
  const unsigned char* length;  // [signature][part]
  const std::uint32_t* index;   // the signature's index in the caller's list
};

__device__ __forceinline__ unsigned part_score(unsigned lx, unsigned ly, unsigned common, std::uint64_t block_size,
                                               int threshold, const std::uint64_t* mask, int t, const PartCodes& y) {
  return gpu::part_score(lx, ly, common, block_size, threshold, mask, kTile, t, y);
}

// Meeting of x signatures [x_begin, x_end) with y signatures [y_begin, y_end) (sorted
// positions). `same`: one group, pairs x < y, both parts compared (at block_size and
// twice it); otherwise x's second part meets y's first, at block_size (y's).
template <bool Same>
__global__ void __launch_bounds__(kTile) match_kernel(Parts parts, std::uint32_t x_begin, std::uint32_t x_end,
                                                      std::uint32_t y_begin, std::uint32_t y_end,
                                                      std::uint64_t block_size, int threshold, DeviceMatch* out,
                                                      unsigned long long capacity, unsigned long long* count) {
  extern __shared__ std::uint64_t masks[];  // [part][code][thread]
  std::uint64_t* first = masks;
  std::uint64_t* second = masks + kCodes * kTile;
  const int t = static_cast<int>(threadIdx.x);
  const std::uint32_t x = x_begin + blockIdx.x * kTile + t;
  const std::uint32_t y0 = y_begin + blockIdx.y * kChunk;
  std::uint32_t y1 = min(y_end, y0 + kChunk);
  const std::uint32_t tile_first = x_begin + blockIdx.x * kTile;
  const std::uint32_t ys = Same ? max(y0, tile_first + 1) : y0;
  if (ys >= y1) return;  // a block wholly below the diagonal
  const bool live = x < x_end;

  // The x parts as masks: the second part for a double meeting, both for the same group.
  unsigned lx[2] = {0, 0};
  for (int p = 0; p < (Same ? 2 : 1); ++p) {
    std::uint64_t* mask = p == 0 ? first : second;
    for (unsigned c = 0; c < kCodes; ++c) mask[c * kTile + t] = 0;
    if (!live) continue;
    const int part = Same ? p : 1;
    lx[p] = parts.length[x * 2 + part];
    const unsigned char* code = parts.codes[x * 2 + part].code;  // kPad past the end
    for (unsigned i = 0; i < lx[p]; ++i) mask[code[i] * kTile + t] |= 1ull << i;
  }
  __syncthreads();
  if (!live) return;
  const std::uint32_t me = parts.index[x];
  // 32-bit LCS steps where every x part of the warp has at most 32 characters (ssdeep's
  // second parts: the double meeting's x part, and the same group's second), so that the
  // warp never runs both widths.
  const unsigned lanes = __activemask();
  const bool narrow[2] = {__all_sync(lanes, lx[0] <= 32) != 0, __all_sync(lanes, lx[1] <= 32) != 0};

  const auto emit = [&](std::uint32_t y, unsigned score) {
    if (score < static_cast<unsigned>(threshold) || score == 0) return;
    const unsigned long long slot = atomicAdd(count, 1ull);
    if (slot < capacity) {
      const std::uint32_t other = parts.index[y];
      out[slot] = DeviceMatch{min(me, other), max(me, other), static_cast<std::int32_t>(score)};
    }
  };
  // kWays y signatures a step (the last step's missing ones stand in as the last y, their
  // answers dropped), their LCS chains side by side.
  for (std::uint32_t y = ys; y < y1; y += kWays) {
    std::uint32_t at[kWays];
    const PartCodes* y_first[kWays];
    unsigned ly0[kWays], c0[kWays];
#pragma unroll
    for (int w = 0; w < kWays; ++w) {
      at[w] = min(y + w, y1 - 1);
      y_first[w] = &parts.codes[at[w] * 2];
      ly0[w] = parts.length[at[w] * 2];
    }
    gpu::lcs<kWays>(first, kTile, t, y_first, ly0, lx[0], narrow[0], c0);
    if constexpr (Same) {
      const PartCodes* y_second[kWays];
      unsigned ly1[kWays], c1[kWays];
#pragma unroll
      for (int w = 0; w < kWays; ++w) {
        y_second[w] = &parts.codes[at[w] * 2 + 1];
        ly1[w] = parts.length[at[w] * 2 + 1];
      }
      gpu::lcs<kWays>(second, kTile, t, y_second, ly1, lx[1], narrow[1], c1);
#pragma unroll
      for (int w = 0; w < kWays; ++w) {
        if (y + w >= y1 || y + w <= x) continue;
        if (ly0[w] == lx[0] && c0[w] == ly0[w] && ly1[w] == lx[1] && c1[w] == ly1[w]) {
          emit(y + w, 100);  // identical signatures
        } else {
          emit(y + w, max(part_score(lx[0], ly0[w], c0[w], block_size, threshold, first, t, *y_first[w]),
                          part_score(lx[1], ly1[w], c1[w], block_size * 2, threshold, second, t, *y_second[w])));
        }
      }
    } else {
#pragma unroll
      for (int w = 0; w < kWays; ++w)
        if (y + w < y1) emit(y + w, part_score(lx[0], ly0[w], c0[w], block_size, threshold, first, t, *y_first[w]));
    }
  }
}

}  // namespace

MatchList match_every_pair_gpu(const std::vector<ctph::Prepared>& signatures, int threshold, int device,
                               double* device_ms, Share share, std::size_t memory_budget) {
  threshold = std::clamp(threshold, 1, 100);
  std::vector<std::uint64_t> sizes(signatures.size());
  for (std::size_t i = 0; i < signatures.size(); ++i) sizes[i] = signatures[i].block_size;
  const CompatibleGroups groups(sizes);
  gpu::CodeVector codes;
  std::vector<unsigned char> lengths;
  if (!gpu::encode(signatures, groups.order(), codes, lengths)) {  // a part outside base64: the CPU's matcher
    if (device_ms != nullptr) *device_ms = 0;
    if (std::all_of(signatures.begin(), signatures.end(), ctph::has_substrings))
      return match_all(signatures, threshold, nullptr, share);
    std::vector<ctph::Prepared> whole = signatures;  // read for the GPU alone
    add_substrings(whole);
    return match_all(whole, threshold, nullptr, share);
  }

  const cuda::DeviceGuard guard(device);
  const cuda::Stream stream;
  const auto d_codes = cuda::to_device(codes.data(), codes.size());
  const auto d_lengths = cuda::to_device(lengths.data(), lengths.size());
  const auto d_index = cuda::to_device(groups.order().data(), groups.order().size());
  const Parts parts{d_codes.get(), d_lengths.get(), d_index.get()};
  constexpr std::size_t kSmem = 2 * kCodes * kTile * sizeof(std::uint64_t);
  cuda::allow_dynamic_shared<match_kernel<true>>(kSmem);
  cuda::allow_dynamic_shared<match_kernel<false>>(kSmem);

  // The matches one launch may leave on the device: what `memory_budget` leaves after the
  // codes, else half this process's share of the free memory, and at least kFewestHeld
  // (smaller slices would leave the GPU idle). Where a meeting's matches pass it, its rows
  // are taken in slices (a tile's matches are always taken whole).
  const std::size_t held = codes.size() * sizeof(PartCodes) + lengths.size() + groups.order().size() * 4;
  const std::size_t room = memory_budget != 0 ? (memory_budget > held ? memory_budget - held : 0)
                                              : device_memory_share() / 2;
  const std::size_t most = std::max(room / sizeof(DeviceMatch), kFewestHeld);
  std::size_t capacity = std::min<std::size_t>(std::size_t{1} << 20, most);
  cuda::DeviceBuffer<DeviceMatch> d_out(capacity);
  const auto hold = [&](std::size_t matches) {  // the buffer remade (the old one let go first)
    capacity = matches;
    d_out = cuda::DeviceBuffer<DeviceMatch>();
    d_out = cuda::DeviceBuffer<DeviceMatch>(capacity);
  };
  cuda::DeviceBuffer<unsigned long long> d_count(1);
  std::vector<DeviceMatch> found;
  double total_ms = 0;
  cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
  std::uint32_t slice = std::numeric_limits<std::uint32_t>::max();  // rows a launch, cut as needed
  for (const CompatibleGroups::Meeting& meeting : groups.meetings()) {
    const auto& gy = groups.groups()[meeting.y];
    auto gx = groups.groups()[meeting.x];
    if (meeting.same() && gx.end - gx.begin < 2) continue;
    // This worker's rows of the group: every worker meets every group.
    const RowRange mine = share_rows(gx.end - gx.begin, meeting.same(), share);
    gx.end = gx.begin + static_cast<std::uint32_t>(mine.end);
    gx.begin += static_cast<std::uint32_t>(mine.begin);
    if ((gy.end - gy.begin + kChunk - 1) / kChunk > 65535)
      throw Failure("too many signatures of one block size for the GPU matcher");
    for (std::uint32_t x = gx.begin; x < gx.end;) {
      const std::uint32_t x_end = gx.end - x > slice ? x + slice : gx.end;
      const dim3 grid((x_end - x + kTile - 1) / kTile, (gy.end - gy.begin + kChunk - 1) / kChunk);
      SIMKIT_CUDA_CHECK(cudaMemsetAsync(d_count.get(), 0, sizeof(unsigned long long), stream.get()));
      start.record(stream.get());
      if (meeting.same())
        match_kernel<true><<<grid, kTile, kSmem, stream.get()>>>(parts, x, x_end, gy.begin, gy.end, gx.block_size,
                                                                 threshold, d_out.get(), capacity, d_count.get());
      else
        match_kernel<false><<<grid, kTile, kSmem, stream.get()>>>(parts, x, x_end, gy.begin, gy.end, gy.block_size,
                                                                  threshold, d_out.get(), capacity, d_count.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
      stop.record(stream.get());
      unsigned long long count = 0;
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(&count, d_count.get(), sizeof count, cudaMemcpyDeviceToHost, stream.get()));
      stream.sync();
      total_ms += cuda::elapsed_ms(start, stop);
      if (count > capacity) {  // again: with a larger buffer, or fewer rows
        if (count > most && x_end - x > kTile) {  // rows for about half the bound
          const std::uint64_t rows = (x_end - x) * (most / 2) / count;
          slice = std::max<std::uint32_t>(kTile, static_cast<std::uint32_t>(rows / kTile * kTile));
        } else {
          hold(std::max<std::size_t>(std::min<std::size_t>(count + count / 4, most), count));
        }
        continue;
      }
      const std::size_t old = found.size();
      found.resize(old + count);
      SIMKIT_CUDA_CHECK(cudaMemcpy(found.data() + old, d_out.get(), count * sizeof(DeviceMatch), cudaMemcpyDeviceToHost));
      x = x_end;
      if (capacity > most) hold(most);  // (a tile's matches taken whole past the bound: back within it)
      if (count < most / 4 && slice <= std::numeric_limits<std::uint32_t>::max() / 2) slice *= 2;  // sparser rows
    }
  }
  if (device_ms != nullptr) *device_ms = total_ms;
  return gpu::sorted_matches(found);
}

void prepare_gpu(int device) {
  // Equal and double block sizes, so that every kernel of the index runs once.
  const char* texts[] = {"3:abcdefghij:abcdefgh", "3:abcdefghik:abcdefgh", "6:abcdefgh:xyz"};
  std::vector<ctph::Prepared> few(std::size(texts));
  for (std::size_t i = 0; i < few.size(); ++i) ctph::prepare(texts[i], few[i]);
  match_indexed_gpu(few, 1, device, nullptr, {});
}

MatchList match_all_gpu(const std::vector<ctph::Prepared>& signatures, int threshold, int device,
                        double* device_ms, Share share) {
  if (index_fits_gpu(signatures, device))
    if (const auto plan = plan_index(signatures)) return match_indexed_gpu(*plan, threshold, device, device_ms, share);
  return match_every_pair_gpu(signatures, threshold, device, device_ms, share);
}

}  // namespace simkit::dedup
