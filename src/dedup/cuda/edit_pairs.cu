// All pairs of short strings that pass a PairRule on the GPU (edit_pairs_gpu in
// dedup/edit_distance.hpp), one thread a pair, by one of three kernels:
//  - shared_rows: the thesis's DP, each thread's row (uint16) in shared memory;
//  - global_rows: the same row in global memory, element i of thread t at row[i * threads + t];
//  - bit_parallel: Myers/Hyyrö bit vectors of up to five 64-bit words (the x string is
//    the pattern; its match masks are built once a tile, in shared memory).
// A block works on tiles: one row's x string, copied to shared memory, against kTileYs
// consecutive columns. Every PairBlock's tiles are numbered one after another, so that
// one launch scores them all (the edit-rate pipeline asks for hundreds of small blocks:
// a launch, copy and wait each cost more than their kernels). Pairs that pass are
// appended through an atomic counter; a launch that finds more than the buffer holds runs
// again with a buffer of the size it counted. The pairs are sorted on the host unless the
// caller takes them as found.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "dedup/edit_detail.hpp"
#include "dedup/edit_distance.hpp"

namespace simkit::dedup {

namespace {

namespace cg = cooperative_groups;
using detail::kMaxPairWords;
using detail::kWordBits;

constexpr int kThreads = 128;
constexpr int kYsPerThread = 4;  // a tile's x string and masks serve this many pairs a thread
constexpr std::uint32_t kTileYs = kThreads * kYsPerThread;
constexpr std::size_t kInitialCapacity = std::size_t{1} << 20;
constexpr int kAlphabet = 256;

struct Strings {
  const char* chars;
  const std::uint32_t* offsets;
};

// A PairBlock as the kernels read it: its tiles (tiles_per_row a row, kTileYs columns a
// tile) numbered from first_tile.
struct TiledBlock {
  std::uint64_t first_tile;
  std::uint32_t x, rows, y, columns, tiles_per_row;
  bool triangle;
};

// One launch: tiles [0, tiles) of the blocks.
struct Batch {
  Strings strings;
  const TiledBlock* blocks;
  std::uint32_t block_count;
  std::uint64_t tiles;
  PairRule rule;
  EditPair* out;
  unsigned long long capacity;
  unsigned long long* count;
};

// The block that holds `tile`: the last whose first tile is at most it.
__device__ const TiledBlock& block_of(const Batch& batch, std::uint64_t tile) {
  std::uint32_t lo = 0, hi = batch.block_count;  // blocks[lo].first_tile <= tile < blocks[hi].first_tile
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (batch.blocks[mid].first_tile <= tile) lo = mid;
    else hi = mid;
  }
  return batch.blocks[lo];
}

// Appends a pair: one atomic per group of threads of a warp that arrive together.
__device__ void emit(const Batch& batch, std::uint32_t a, std::uint32_t b, std::uint32_t d) {
  const cg::coalesced_group group = cg::coalesced_threads();
  unsigned long long base = 0;
  if (group.thread_rank() == 0) base = atomicAdd(batch.count, static_cast<unsigned long long>(group.size()));
  const unsigned long long slot = group.shfl(base, 0) + group.thread_rank();
  if (slot < batch.capacity) batch.out[slot] = EditPair{a, b, d};
}

// Runs the scorer over every pair of the batch that the length test leaves. The scorer's
// prepare(x, la) is called by the whole block once a tile, distance(x, la, y, lb) by the
// thread of each pair.
template <typename Scorer>
__device__ void score_batch(const Batch& batch, Scorer& scorer) {
  __shared__ unsigned char x[kMaxPairString];
  for (std::uint64_t tile = blockIdx.x; tile < batch.tiles; tile += gridDim.x) {
    const TiledBlock& block = block_of(batch, tile);
    const std::uint64_t at = tile - block.first_tile;
    const auto row = static_cast<std::uint32_t>(at / block.tiles_per_row);
    const std::uint64_t first_y = (block.triangle ? row + std::uint64_t{1} : 0) + at % block.tiles_per_row * kTileYs;
    if (first_y >= block.columns) continue;  // the same for the whole block: no barrier is skipped unevenly
    const std::uint32_t a = block.x + row;
    const std::uint32_t x_begin = batch.strings.offsets[a];
    const std::uint32_t la = batch.strings.offsets[a + 1] - x_begin;
    for (std::uint32_t i = threadIdx.x; i < la; i += kThreads) x[i] = static_cast<unsigned char>(batch.strings.chars[x_begin + i]);
    __syncthreads();
    scorer.prepare(x, la);
    for (int step = 0; step < kYsPerThread; ++step) {
      const std::uint64_t j = first_y + step * kThreads + threadIdx.x;
      if (j >= block.columns) break;
      const std::uint32_t b = block.y + static_cast<std::uint32_t>(j);
      const std::uint32_t y_begin = batch.strings.offsets[b];
      const std::uint32_t lb = batch.strings.offsets[b + 1] - y_begin;
      if (!batch.rule.lengths_can_pass(la, lb)) continue;
      const std::uint32_t d = scorer.distance(x, la, batch.strings.chars + y_begin, lb);
      if (batch.rule.passes(d, la, lb)) emit(batch, a, b, d);
    }
    __syncthreads();  // the next tile rewrites x and the scorer's shared state
  }
}

// The DP over a row as long as x (element i at row[i * stride]), one y character at a time.
__device__ std::uint32_t row_distance(std::uint16_t* row, std::size_t stride, const unsigned char* x, std::uint32_t la,
                                      const char* y, std::uint32_t lb) {
  for (std::uint32_t i = 0; i <= la; ++i) row[i * stride] = static_cast<std::uint16_t>(i);
  for (std::uint32_t j = 0; j < lb; ++j) {
    const auto c = static_cast<unsigned char>(y[j]);
    std::uint32_t diagonal = row[0], left = j + 1;
    row[0] = static_cast<std::uint16_t>(left);
    for (std::uint32_t i = 1; i <= la; ++i) {
      const std::uint32_t up = row[i * stride];
      left = min(diagonal + (x[i - 1] != c ? 1u : 0u), min(up, left) + 1);
      diagonal = up;
      row[i * stride] = static_cast<std::uint16_t>(left);
    }
  }
  return row[la * stride];
}

struct SharedRows {
  std::uint16_t* rows;  // [la + 1][kThreads], dynamic shared memory
  __device__ void prepare(const unsigned char*, std::uint32_t) {}
  __device__ std::uint32_t distance(const unsigned char* x, std::uint32_t la, const char* y, std::uint32_t lb) {
    return row_distance(rows + threadIdx.x, kThreads, x, la, y, lb);
  }
};

struct GlobalRows {
  std::uint16_t* rows;  // [longest x + 1][threads of the grid]
  __device__ void prepare(const unsigned char*, std::uint32_t) {}
  __device__ std::uint32_t distance(const unsigned char* x, std::uint32_t la, const char* y, std::uint32_t lb) {
    const std::size_t threads = std::size_t{gridDim.x} * kThreads;
    return row_distance(rows + std::size_t{blockIdx.x} * kThreads + threadIdx.x, threads, x, la, y, lb);
  }
};

// Myers/Hyyrö over Words words of x's match masks; the score follows row la.
template <int Words>
__device__ std::uint32_t bit_distance(const unsigned long long* masks, std::uint32_t la, const char* y, std::uint32_t lb) {
  std::uint64_t pv[Words], mv[Words];
#pragma unroll
  for (int w = 0; w < Words; ++w) {
    pv[w] = ~std::uint64_t{0};
    mv[w] = 0;
  }
  const int last_bit = static_cast<int>((la - 1) % kWordBits);
  int score = static_cast<int>(la);
  for (std::uint32_t j = 0; j < lb; ++j) {
    const unsigned long long* eq = masks + static_cast<unsigned char>(y[j]) * kMaxPairWords;
    int h = 1;
#pragma unroll
    for (int w = 0; w < Words; ++w) h = detail::advance_block(pv[w], mv[w], eq[w], h, w == Words - 1 ? last_bit : kWordBits - 1);
    score += h;
  }
  return static_cast<std::uint32_t>(score);
}

struct BitParallel {
  unsigned long long* masks;  // [kAlphabet][kMaxPairWords], shared memory
  int words = 0;

  __device__ void prepare(const unsigned char* x, std::uint32_t la) {
    words = static_cast<int>((la + kWordBits - 1) / kWordBits);
    for (int e = threadIdx.x; e < kAlphabet * kMaxPairWords; e += kThreads) masks[e] = 0;
    __syncthreads();
    for (std::uint32_t i = threadIdx.x; i < la; i += kThreads)
      atomicOr(&masks[x[i] * kMaxPairWords + i / kWordBits], 1ull << (i % kWordBits));
    __syncthreads();
  }
  // words is the same for the whole block, so the branch is too.
  __device__ std::uint32_t distance(const unsigned char*, std::uint32_t la, const char* y, std::uint32_t lb) const {
    switch (words) {
      case 1: return bit_distance<1>(masks, la, y, lb);
      case 2: return bit_distance<2>(masks, la, y, lb);
      case 3: return bit_distance<3>(masks, la, y, lb);
      case 4: return bit_distance<4>(masks, la, y, lb);
      case 5: return bit_distance<5>(masks, la, y, lb);
      default: return lb;  // x is empty
    }
  }
};
static_assert(kMaxPairWords == 5, "BitParallel::distance has a case for each word count");

__global__ void __launch_bounds__(kThreads) shared_rows_kernel(Batch batch) {
  extern __shared__ std::uint16_t shared_rows[];
  SharedRows scorer{shared_rows};
  score_batch(batch, scorer);
}

__global__ void __launch_bounds__(kThreads) global_rows_kernel(Batch batch, std::uint16_t* rows) {
  GlobalRows scorer{rows};
  score_batch(batch, scorer);
}

__global__ void __launch_bounds__(kThreads) bit_parallel_kernel(Batch batch) {
  __shared__ unsigned long long masks[kAlphabet * kMaxPairWords];
  BitParallel scorer{masks};
  score_batch(batch, scorer);
}

struct DeviceStrings {
  cuda::DeviceBuffer<char> chars;
  cuda::DeviceBuffer<std::uint32_t> offsets;
  Strings view() const { return {chars.get(), offsets.get()}; }
};

DeviceStrings upload(const StringSet& set) {
  return {cuda::to_device(set.chars.data(), set.chars.size()), cuda::to_device(set.offsets.data(), set.offsets.size())};
}

std::uint32_t longest(const StringSet& set) {
  std::uint32_t most = 0;
  for (std::size_t i = 0; i < set.size(); ++i) most = std::max(most, set.offsets[i + 1] - set.offsets[i]);
  return most;
}

// Launches the chosen kernel on a grid of at most as many blocks as the device holds at
// once; global_rows' scratch rows are sized for that grid.
class Launcher {
 public:
  Launcher(EditKernel kernel, std::uint32_t longest_x) : kernel_(kernel) {
    const std::size_t row_elements = std::size_t{longest_x} + 1;
    int per_sm = 0;
    switch (kernel) {
      case EditKernel::shared_rows:
        shared_bytes_ = row_elements * kThreads * sizeof(std::uint16_t);
        cuda::allow_dynamic_shared<shared_rows_kernel>((kMaxPairString + 1) * kThreads * sizeof(std::uint16_t));
        SIMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shared_rows_kernel, kThreads, shared_bytes_));
        break;
      case EditKernel::global_rows:
        SIMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, global_rows_kernel, kThreads, 0));
        break;
      case EditKernel::bit_parallel:
        SIMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bit_parallel_kernel, kThreads, 0));
        break;
    }
    resident_blocks_ = static_cast<std::uint64_t>(std::max(per_sm, 1)) * cuda::sm_count();
    if (kernel == EditKernel::global_rows)
      scratch_ = cuda::DeviceBuffer<std::uint16_t>(row_elements * resident_blocks_ * kThreads);
  }

  void launch(const Batch& batch, cudaStream_t stream) const {
    const auto blocks = static_cast<unsigned>(std::min(batch.tiles, resident_blocks_));
    switch (kernel_) {
      case EditKernel::shared_rows: shared_rows_kernel<<<blocks, kThreads, shared_bytes_, stream>>>(batch); break;
      case EditKernel::global_rows: global_rows_kernel<<<blocks, kThreads, 0, stream>>>(batch, scratch_.get()); break;
      case EditKernel::bit_parallel: bit_parallel_kernel<<<blocks, kThreads, 0, stream>>>(batch); break;
    }
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

 private:
  EditKernel kernel_;
  std::size_t shared_bytes_ = 0;
  std::uint64_t resident_blocks_ = 0;
  cuda::DeviceBuffer<std::uint16_t> scratch_;
};

// Pairs that pass, as the kernels leave them in `out` and the counter: the found pairs
// of a launch, run again with a larger buffer when they overflow it.
class Collector {
 public:
  Collector() : out_(kInitialCapacity), count_(1), start_(cudaEventDefault), stop_(cudaEventDefault) {}

  std::vector<EditPair> run(Batch batch, const Launcher& launcher) {
    for (;;) {
      batch.out = out_.get();
      batch.capacity = out_.size();
      batch.count = count_.get();
      SIMKIT_CUDA_CHECK(cudaMemsetAsync(count_.get(), 0, sizeof(unsigned long long), stream_.get()));
      start_.record(stream_.get());
      launcher.launch(batch, stream_.get());
      stop_.record(stream_.get());
      unsigned long long found = 0;
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(&found, count_.get(), sizeof found, cudaMemcpyDeviceToHost, stream_.get()));
      stream_.sync();
      device_ms_ += cuda::elapsed_ms(start_, stop_);
      if (found <= out_.size()) return copy_out(found);
      out_ = cuda::DeviceBuffer<EditPair>(found);
    }
  }
  double device_ms() const { return device_ms_; }
  void clear_time() { device_ms_ = 0; }

 private:
  std::vector<EditPair> copy_out(std::size_t found) {
    std::vector<EditPair> pairs(found);
    if (found > 0)
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(pairs.data(), out_.get(), found * sizeof(EditPair), cudaMemcpyDeviceToHost,
                                        stream_.get()));
    stream_.sync();
    return pairs;
  }

  cuda::Stream stream_;
  cuda::DeviceBuffer<EditPair> out_;
  cuda::DeviceBuffer<unsigned long long> count_;
  cuda::Event start_, stop_;
  double device_ms_ = 0;
};

// Collectors kept for the process, idle ones by device: the edit-rate pipeline scores each
// filter's signatures on a thread of its own, made anew each run, and making a stream,
// events and output buffer cost more than its kernels (4-13 ms a thread in call 95's
// trace). Never freed: at exit the driver's teardown takes them, while freeing them from a
// static's destructor would come after the runtime's own teardown.
struct IdleCollectors {
  std::mutex mutex;
  std::map<int, std::vector<Collector*>> by_device;
};

IdleCollectors& idle_collectors() {
  static auto* idle = new IdleCollectors;
  return *idle;
}

// A collector for `device` (current) while this lives, then idle again.
class CollectorLoan {
 public:
  explicit CollectorLoan(int device) : device_(device) {
    IdleCollectors& idle = idle_collectors();
    {
      const std::lock_guard lock(idle.mutex);
      std::vector<Collector*>& mine = idle.by_device[device];
      if (!mine.empty()) {
        collector_ = mine.back();
        mine.pop_back();
      }
    }
    if (collector_ == nullptr) collector_ = new Collector;
    collector_->clear_time();
  }
  ~CollectorLoan() {
    IdleCollectors& idle = idle_collectors();
    const std::lock_guard lock(idle.mutex);
    idle.by_device[device_].push_back(collector_);
  }
  CollectorLoan(const CollectorLoan&) = delete;
  CollectorLoan& operator=(const CollectorLoan&) = delete;
  Collector& operator*() const { return *collector_; }

 private:
  int device_;
  Collector* collector_ = nullptr;
};

}  // namespace

void keep_edit_pairs_collectors(int device, std::size_t count) {
  const cuda::DeviceGuard guard(device);
  std::vector<std::unique_ptr<CollectorLoan>> loans;  // all at once: `count` made
  for (std::size_t i = 0; i < count; ++i) loans.push_back(std::make_unique<CollectorLoan>(device));
}

std::vector<EditPair> edit_pairs_gpu(const StringSet& strings, const std::vector<PairBlock>& blocks, PairRule rule,
                                     EditKernel kernel, int device, double* device_ms, PairOrder order) {
  detail::check_pair_blocks(strings, blocks);
  if (device_ms != nullptr) *device_ms = 0;
  std::vector<TiledBlock> tiled;
  std::uint64_t tiles = 0;
  for (const PairBlock& b : blocks) {
    if (b.pairs() == 0) continue;
    const std::uint32_t widest = b.triangle ? b.columns - 1 : b.columns;  // the first row has the most pairs
    const std::uint32_t tiles_per_row = (widest + kTileYs - 1) / kTileYs;
    tiled.push_back({tiles, b.x, b.rows, b.y, b.columns, tiles_per_row, b.triangle});
    tiles += std::uint64_t{b.rows} * tiles_per_row;
  }
  if (tiled.empty()) return {};

  const cuda::DeviceGuard guard(device);
  const DeviceStrings d_strings = upload(strings);
  const cuda::DeviceBuffer<TiledBlock> d_blocks = cuda::to_device(tiled.data(), tiled.size());
  const Launcher launcher(kernel, longest(strings));
  const CollectorLoan loan(device);
  Collector& collector = *loan;
  std::vector<EditPair> pairs = collector.run(
      Batch{d_strings.view(), d_blocks.get(), static_cast<std::uint32_t>(tiled.size()), tiles, rule}, launcher);
  if (device_ms != nullptr) *device_ms = collector.device_ms();
  if (order == PairOrder::sorted) detail::sort_pairs(pairs);
  return pairs;
}

}  // namespace simkit::dedup
