// The corpus's window pairs counted on the GPU (gpu.hpp: count_pairs_gpu): build's pass 2
// with the host's key generation, radix sorts and merges replaced by one kernel, CUB's
// radix sort and CUB's reduce-by-key, a chunk of tokens at a time (each with the windows'
// reach on both sides, so that a chunk may end anywhere).
//
// Each token emits its pairs with the next window - 1 tokens of its sentence into 2 (window
// - 1) fixed slots (both directions, as the CPU: w1 << 32 | (w2 * relations + slot) for w1
// < rows); unused slots hold a sentinel, rows << 32, which sorts after every real key and
// is dropped after the reduction. The sort runs over the bits a key can have (32 + those of
// rows); the reduction folds PPMI's distance slots into one weighted count as it sums. The
// column marginals are summed per token (its pairs to both sides) with one atomic add per
// cell it touches. The counts are integers: the same as the CPU's, whatever the order.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/transform_iterator.h>

#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "disco/gpu.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"

namespace simkit::disco::detail {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxDistance = 63;  // window <= 64 (build refuses more)

struct Emit {
  const std::int32_t* tokens;  // the chunk's tokens with up to `distances` more on each side
  std::size_t size;            // tokens held
  std::size_t first, owned;    // the chunk's own: tokens[first, first + owned)
  int distances;               // window - 1
  bool ppmi;
  std::uint64_t rows;
  std::uint32_t relations;
  std::uint64_t sentinel;
  std::uint64_t weight[kMaxDistance];  // ppmi: of distance d at d - 1
  std::uint64_t* keys;                 // 2 distances slots an owned token
  unsigned long long* column;
};

// One thread an owned token: its pairs with the tokens after it (both directions), and
// its own marginal cells from its pairs on both sides.
__global__ void emit_pairs(const Emit e) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= e.owned) return;
  const std::size_t i = e.first + t;
  std::uint64_t* out = e.keys + t * 2 * static_cast<std::size_t>(e.distances);
  int slots = 0;
  const std::int32_t a = e.tokens[i];
  if (a >= 0) {
    const auto wa = static_cast<std::uint64_t>(a);
    unsigned long long mass = 0;  // ppmi: the token's weighted pairs, its column cell
    for (int d = 1; d <= e.distances && i + d < e.size; ++d) {
      const std::int32_t c = e.tokens[i + d];
      if (c == kSentenceEnd) break;
      if (c < 0) continue;
      const auto wc = static_cast<std::uint64_t>(c);
      // ppmi: slot d - 1 both ways; lin: w2 at +d (slot d + L - 1) and, seen from w2, -d (L - d)
      const std::uint64_t forward = e.ppmi ? d - 1 : d + e.distances - 1, backward = e.ppmi ? d - 1 : e.distances - d;
      out[slots++] = wa < e.rows ? wa << 32 | (wc * e.relations + forward) : e.sentinel;
      out[slots++] = wc < e.rows ? wc << 32 | (wa * e.relations + backward) : e.sentinel;
      if (e.ppmi) mass += e.weight[d - 1];
      else atomicAdd(e.column + wa * e.relations + backward, 1ull);
    }
    for (int d = 1; d <= e.distances && static_cast<std::size_t>(d) <= i; ++d) {
      const std::int32_t c = e.tokens[i - d];
      if (c == kSentenceEnd) break;
      if (c < 0) continue;
      if (e.ppmi) mass += e.weight[d - 1];
      else atomicAdd(e.column + wa * e.relations + (d + e.distances - 1), 1ull);
    }
    if (e.ppmi && mass > 0) atomicAdd(e.column + wa, mass);
  }
  for (; slots < 2 * e.distances; ++slots) out[slots] = e.sentinel;
}

// A sorted key as the count's key: PPMI's slot folded to 0 (KeyCounts's fold rule,
// key_counts.cpp count_sorted, on the device).
struct FoldKey {
  std::uint32_t fold;  // relations, or 0: no folding
  __host__ __device__ std::uint64_t operator()(std::uint64_t key) const {
    return fold == 0 ? key : key - (key & 0xFFFFFFFFu) % fold;
  }
};

// A sorted key's weight: PPMI's of its slot, else 1.
struct KeyWeight {
  std::uint32_t fold;
  const std::uint64_t* weight;
  __host__ __device__ std::uint64_t operator()(std::uint64_t key) const {
    return fold == 0 ? 1 : weight[(key & 0xFFFFFFFFu) % fold];
  }
};

// Drops a trailing sentinel run and finds where each partition starts: starts[0..P].
__global__ void cut_runs(const std::uint64_t* unique, const std::uint64_t* runs_found, std::uint64_t sentinel,
                         const std::uint64_t* bounds, int parts, std::uint64_t* starts) {
  std::uint64_t runs = *runs_found;
  if (runs > 0 && unique[runs - 1] == sentinel) --runs;
  starts[0] = 0;
  for (int p = 1; p < parts; ++p) {
    std::uint64_t lo = starts[p - 1], hi = runs;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (unique[mid] < bounds[p - 1]) lo = mid + 1;
      else hi = mid;
    }
    starts[p] = lo;
  }
  starts[parts] = runs;
}

__global__ void interleave(const std::uint64_t* keys, const std::uint64_t* counts, std::uint64_t runs,
                           ulonglong2* pairs) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < runs) pairs[i] = make_ulonglong2(keys[i], counts[i]);
}

}  // namespace

double count_pairs_gpu(const PairCountJob& job, std::span<std::uint64_t> column,
                       const std::function<void(std::vector<CountedRun>)>& parts) {
  if (job.window < 2 || job.window - 1 > kMaxDistance) throw Failure("internal: count_pairs_gpu's window");
  if (job.tokens.empty()) return 0;
  const cuda::DeviceGuard guard(job.device);
  const int distances = job.window - 1;
  const auto relations = static_cast<std::uint32_t>(job.ppmi ? distances : 2 * distances);
  const std::size_t slots = 2 * static_cast<std::size_t>(distances);
  const std::uint64_t sentinel = job.rows << 32;
  const int end_bit = 32 + std::bit_width(job.rows);
  cuda::Stream stream;
  // The buffers of any chunk size first (the column marginals can be large: Lin's are
  // words x relations), each copied on the stream the kernels run on.
  cuda::DeviceBuffer<unsigned long long> d_column(std::max<std::size_t>(column.size(), 1));
  SIMKIT_CUDA_CHECK(cudaMemsetAsync(d_column.get(), 0, d_column.size() * sizeof(unsigned long long), stream.get()));
  const std::vector<std::uint64_t> weights = job.ppmi ? job.fold : std::vector<std::uint64_t>{};
  const auto upload = [&](const std::vector<std::uint64_t>& host) {
    cuda::DeviceBuffer<std::uint64_t> device(std::max<std::size_t>(host.size(), 1));
    if (!host.empty())
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(device.get(), host.data(), host.size() * sizeof(std::uint64_t),
                                        cudaMemcpyHostToDevice, stream.get()));
    return device;
  };
  const cuda::DeviceBuffer<std::uint64_t> d_weight = upload(weights), d_bounds = upload(job.bounds);
  const int partitions = static_cast<int>(job.bounds.size()) + 1;
  cuda::DeviceBuffer<std::uint64_t> d_starts(partitions + 1), d_runs(1);
  // Device bytes a token takes: itself, its slots' keys twice (the sort's two buffers),
  // the unique keys, their counts and the interleaved pairs (the worst case: all distinct),
  // and CUB's scratch (a fraction of a key a slot). Half of what is free, shared with the
  // other ranks of this host that use the same GPU.
  std::size_t free = 0, total = 0;
  SIMKIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  int devices = 1;
  SIMKIT_CUDA_CHECK(cudaGetDeviceCount(&devices));
  const std::size_t sharing = static_cast<std::size_t>((cluster::local_size() + devices - 1) / std::max(devices, 1));
  const std::size_t share = free / 2 / std::max<std::size_t>(sharing, 1);
  const std::size_t budget = job.memory_budget != 0 ? std::min(job.memory_budget, share) : share;
  const std::size_t per_token = sizeof(std::int32_t) + slots * (5 * sizeof(std::uint64_t) + sizeof(ulonglong2)) + 64;
  const std::size_t most = std::clamp<std::size_t>(budget / per_token, 4096,
                                                   std::size_t{std::numeric_limits<int>::max()} / slots);
  const std::size_t longest = std::min(most, job.tokens.size()), capacity = longest * slots;
  cuda::DeviceBuffer<std::int32_t> d_tokens(longest + 2 * static_cast<std::size_t>(distances));
  cuda::DeviceBuffer<std::uint64_t> d_keys(capacity), d_alternate(capacity), d_unique(capacity), d_counts(capacity);
  cuda::DeviceBuffer<ulonglong2> d_pairs(capacity);

  const std::uint32_t fold = job.ppmi ? relations : 0;
  std::size_t sort_bytes = 0, reduce_bytes = 0;
  {
    cub::DoubleBuffer<std::uint64_t> keys(d_keys.get(), d_alternate.get());
    SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, keys, static_cast<int>(capacity), 0, end_bit,
                                                     stream.get()));
    SIMKIT_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(
        nullptr, reduce_bytes, thrust::make_transform_iterator(d_keys.get(), FoldKey{fold}), d_unique.get(),
        thrust::make_transform_iterator(d_keys.get(), KeyWeight{fold, d_weight.get()}), d_counts.get(), d_runs.get(),
        ::cuda::std::plus<std::uint64_t>{}, static_cast<int>(capacity), stream.get()));
  }
  cuda::DeviceBuffer<unsigned char> d_temp(std::max(sort_bytes, reduce_bytes));

  Emit emit{};
  emit.distances = distances;
  emit.ppmi = job.ppmi;
  emit.rows = job.rows;
  emit.relations = relations;
  emit.sentinel = sentinel;
  for (std::size_t d = 0; d < weights.size() && d < kMaxDistance; ++d) emit.weight[d] = weights[d];
  emit.tokens = d_tokens.get();
  emit.column = d_column.get();
  cuda::Event began(cudaEventDefault), ended(cudaEventDefault);
  float device_ms = 0;
  for (std::size_t start = 0; start < job.tokens.size(); start += longest) {
    // The chunk's tokens and the windows' reach on each side.
    const std::size_t count = std::min(longest, job.tokens.size() - start), items = count * slots;
    const std::size_t lo = start - std::min<std::size_t>(start, distances),
                      hi = std::min(job.tokens.size(), start + count + distances);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(d_tokens.get(), job.tokens.data() + lo, (hi - lo) * sizeof(std::int32_t),
                                      cudaMemcpyHostToDevice, stream.get()));
    emit.size = hi - lo;
    emit.first = start - lo;
    emit.owned = count;
    emit.keys = d_keys.get();
    began.record(stream.get());
    emit_pairs<<<static_cast<unsigned>((count + kThreads - 1) / kThreads), kThreads, 0, stream.get()>>>(emit);
    SIMKIT_CUDA_CHECK_LAUNCH();
    cub::DoubleBuffer<std::uint64_t> keys(d_keys.get(), d_alternate.get());
    SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(d_temp.get(), sort_bytes, keys, static_cast<int>(items), 0,
                                                     end_bit, stream.get()));
    SIMKIT_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(
        d_temp.get(), reduce_bytes, thrust::make_transform_iterator(keys.Current(), FoldKey{fold}), d_unique.get(),
        thrust::make_transform_iterator(keys.Current(), KeyWeight{fold, d_weight.get()}), d_counts.get(),
        d_runs.get(), ::cuda::std::plus<std::uint64_t>{}, static_cast<int>(items), stream.get()));
    cut_runs<<<1, 1, 0, stream.get()>>>(d_unique.get(), d_runs.get(), sentinel, d_bounds.get(), partitions,
                                         d_starts.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    ended.record(stream.get());
    std::vector<std::uint64_t> starts(partitions + 1);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(starts.data(), d_starts.get(), starts.size() * sizeof(std::uint64_t),
                                      cudaMemcpyDeviceToHost, stream.get()));
    stream.sync();
    device_ms += cuda::elapsed_ms(began, ended);
    const std::uint64_t runs = starts.back();
    if (runs > 0) {
      interleave<<<static_cast<unsigned>((runs + kThreads - 1) / kThreads), kThreads, 0, stream.get()>>>(
          d_unique.get(), d_counts.get(), runs, d_pairs.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
      stream.sync();
    }
    // Each partition's run allocated on its own core (the pages' first touch), then copied.
    std::vector<CountedRun> out(static_cast<std::size_t>(partitions));
    tbb::parallel_for(0, partitions, [&](int p) {
      const cuda::DeviceGuard on(job.device);
      CountedRun& run = out[static_cast<std::size_t>(p)];
      run.resize(starts[p + 1] - starts[p]);
      if (!run.empty())
        SIMKIT_CUDA_CHECK(cudaMemcpy(static_cast<void*>(run.data()), d_pairs.get() + starts[p],
                                     run.size() * sizeof(ulonglong2), cudaMemcpyDeviceToHost));
    });
    parts(std::move(out));
  }
  std::vector<unsigned long long> sums(column.size());
  if (!sums.empty())
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(sums.data(), d_column.get(), sums.size() * sizeof(unsigned long long),
                                      cudaMemcpyDeviceToHost, stream.get()));
  stream.sync();
  for (std::size_t i = 0; i < sums.size(); ++i) column[i] += sums[i];
  return device_ms;
}

}  // namespace simkit::disco::detail
