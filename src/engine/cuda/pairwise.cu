// The blocked pairwise engine on one GPU.
//
// Block pairs run in order on a compute stream. Unless B is resident, B blocks are
// double-buffered: the copy of the next block (copy stream) overlaps the scoring and
// selection of this one, ordered by events. The running top-k of every row of A stays
// on the device until the end; threshold hits are drained to the host after each tile.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/text.hpp"

#include "engine/block_mask.hpp"
#include "core/cuda/check.hpp"
#include "engine/cuda/dot_candidates.hpp"
#include "core/cuda/memory.hpp"
#include "engine/cuda/select.hpp"
#include "engine/pairwise_common.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/progress.hpp"

namespace simkit::gpu {

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kReserve = 256 * kMiB;  // left for cuBLAS workspaces and the runtime
constexpr std::size_t kMaxInitialHits = std::size_t{1} << 20;
constexpr std::size_t kPreferredA = 1024;  // rows of A per block: a GEMM's worth of queries
// Fused path (scorer.offer_candidates): candidate slots per row of A, and the shapes it
// serves (batches; top-k lists short enough that few scores beat the bar once the first
// block of B has set it). Each launch offers at most (kFusedExpected / width) times the
// rows seen so far (twice that for the last, which takes a shorter remainder with it), so
// a row expects about kFusedExpected candidates (random data), far below the capacity,
// and the bars rise between launches. Long launches keep the
// kernel's pipeline full but offer more candidates, which cost time in its epilogue:
// at k = 10 (width 16), 4 times the rows seen measured faster than 16 on an H100
// (bench/results/neighbors.md, tuning notes).
constexpr std::size_t kFusedExpected = 64;
constexpr std::size_t kCandidatesPerRow = 2048;
constexpr std::size_t kFusedMinRowsA = 32;
// Answers from this size are page-locked for their copy from the device (locking runs at
// about 27 GB/s; a pageable copy is staged by the driver at a fraction of the link's
// rate); smaller ones land in the engine's pinned buffer, kept between runs.
constexpr std::size_t kLockAnswersBytes = std::size_t{1} << 20;

// Waits for a stream when it goes out of scope, so that memory its copies write to is
// freed only after them (also when an error unwinds).
struct SyncOnExit {
  cudaStream_t stream;
  ~SyncOnExit() { cudaStreamSynchronize(stream); }
};
constexpr int kFusedMaxWidth = 64;

bool fused_enabled() {
  const char* env = std::getenv("SIMKIT_GPU_FUSED");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

// A positive whole number from environment variable `name` (a tuning knob), or
// `otherwise` when it is unset or not such a number.
std::size_t tuning_value(const char* name, std::size_t otherwise) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env < '1' || *env > '9') return otherwise;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(env, &end, 10);
  return *end == '\0' ? static_cast<std::size_t>(value) : otherwise;
}

// Candidates a row expects a launch of the fused path (SIMKIT_GPU_FUSED_EXPECTED tunes it).
std::size_t fused_expected() { return tuning_value("SIMKIT_GPU_FUSED_EXPECTED", kFusedExpected); }

// Rows of A a block (SIMKIT_GPU_ROWS_A tunes it).
std::size_t preferred_rows_a() { return tuning_value("SIMKIT_GPU_ROWS_A", kPreferredA); }

// Largest score tile: SIMKIT_GPU_TILE_MB, else the scorer's preference, else small enough
// to stay in the L2 cache between scoring and selection.
std::size_t tile_cap_bytes(const BlockScorer& scorer) {
  if (const char* env = std::getenv("SIMKIT_GPU_TILE_MB"); env != nullptr && *env != '\0')
    return std::max<std::size_t>(1, std::strtoull(env, nullptr, 10)) * kMiB;
  if (scorer.preferred_tile_bytes() != 0) return scorer.preferred_tile_bytes();
  return 32 * kMiB;  // measured best of 16, 32, 64 and 128 MiB on an H100 (bench/results/neighbors.md)
}

struct Plan {
  detail::BlockSizes sizes;
  bool resident = false;
  bool fused = false;  // after the first block of B, the rest is scored by offer_candidates
  int width = 0;  // top-k slots per row (0: no top-k)
  std::size_t hit_capacity = 0;
};

std::size_t budget_for(const PairwiseJob& job, int device) {
  if (job.memory_budget != 0) return job.memory_budget;
  const GpuMemory memory = gpu_memory(device);
  const auto usable = static_cast<std::size_t>(static_cast<double>(memory.free) * 0.9);
  return usable > kReserve ? usable - kReserve : usable / 2;
}

Plan make_plan(const PairwiseJob& job, const BlockScorer& scorer, int device, bool allow_fused) {
  Plan plan;
  plan.resident = scorer.b_resident();
  plan.width = job.k > 0 ? cuda::state_width(job.k) : 0;
  const std::size_t budget = budget_for(job, device);
  // Room for threshold hits starts at a 64th of the budget and grows when a tile needs more.
  plan.hit_capacity =
      job.threshold ? std::clamp<std::size_t>(budget / 64 / sizeof(ScoredPair), 1024, kMaxInitialHits) : 0;
  // The running top-k state (width slots a row) and each row's k best packed for the copy out.
  const std::size_t fixed = job.rows_a * (static_cast<std::size_t>(plan.width) + (plan.width > 0 ? job.k : 0)) * 8 +
                            plan.hit_capacity * sizeof(ScoredPair);
  const bool transposes = job.symmetric && job.k > 0;
  const auto need = [&](std::size_t ta, std::size_t tb) {
    std::size_t bytes = ta * scorer.bytes_per_row_a() + ta * tb * sizeof(float) * (transposes ? 2 : 1);
    if (!plan.resident) bytes += 2 * tb * scorer.bytes_per_row_b();
    // Partial lists of long rows cut into segments (cuda::select_rows).
    bytes += std::max(cuda::select_scratch_entries(ta, tb, plan.width),
                      transposes ? cuda::select_scratch_entries(tb, ta, plan.width) : 0) * 8;
    return bytes;
  };
  const std::size_t minimum = fixed + need(1, 1);
  if (budget < minimum)
    throw UsageError(cat("memory budget ", format_byte_size(budget),
                         " is too small for this job: it needs at least ", format_byte_size(minimum)));
  const std::size_t available = budget - fixed;

  detail::BlockSizes sizes = detail::block_sizes(job, tile_cap_bytes(scorer) / sizeof(float), preferred_rows_a());
  while (need(sizes.a, sizes.b) > available) {
    if (job.symmetric) {
      sizes.a = sizes.b = std::max<std::size_t>(1, sizes.a / 2);
    } else if (sizes.b > 1 && (sizes.b >= sizes.a || sizes.a == 1)) {
      sizes.b = std::max<std::size_t>(1, sizes.b / 2);
    } else {
      sizes.a = std::max<std::size_t>(1, sizes.a / 2);
    }
  }
  plan.sizes = sizes;
  // The first block of B goes through a tile and sets the bars the fused path filters by.
  const std::size_t candidate_bytes = sizes.a * kCandidatesPerRow * 12;
  plan.fused = allow_fused && fused_enabled() && plan.resident && plan.width > 0 &&
               plan.width <= kFusedMaxWidth && !job.threshold && !job.symmetric && !job.exclude_self &&
               job.rows_a >= kFusedMinRowsA && sizes.b < job.rows_b && scorer.offers_candidates() &&
               need(sizes.a, sizes.b) + candidate_bytes <= available;
  return plan;
}

// Grows a device buffer to at least `count` elements (contents are not kept).
template <typename T>
T* ensure(cuda::DeviceBuffer<T>& buffer, std::size_t count) {
  if (buffer.size() < count) {
    buffer.reset();
    buffer = cuda::DeviceBuffer<T>(count);
  }
  return buffer.get();
}

}  // namespace

struct Engine::Impl {
  int device;
  cuda::Stream compute, copy;
  cuda::Event b_ready[2], b_free[2];
  cuda::Event start{cudaEventDefault}, stop{cudaEventDefault};
  cuda::DeviceBuffer<std::byte> a_slot, b_slots[2];
  cuda::DeviceBuffer<float> tile, transposed;
  // Running top-k of every row: the scores, then the indices, in one allocation.
  cuda::DeviceBuffer<std::uint32_t> state;
  cuda::SelectScratch scratch;
  cuda::DeviceBuffer<ScoredPair> hits;
  cuda::DeviceBuffer<unsigned long long> hit_count{1};
  cuda::PinnedBuffer<unsigned long long> host_count{1};
  cuda::DeviceBuffer<std::uint32_t> packed;  // each row's k best, packed for the copy to the answer
  cuda::PinnedBuffer<std::uint32_t> small_answer;  // where a small answer lands (kept between runs)
  // Candidate lists of the fused path and its overflow flag.
  cuda::DeviceBuffer<float> candidate_scores;
  cuda::DeviceBuffer<std::uint32_t> candidate_indices, candidate_counts;
  cuda::DeviceBuffer<unsigned> overflow{1};
  cuda::PinnedBuffer<unsigned> host_overflow{1};
  double last_ms = 0;
  bool print_stats = std::getenv("SIMKIT_ENGINE_STATS") != nullptr;
  const float* l2_tile = nullptr;  // the tile the stream's L2 window covers
  std::size_t l2_bytes = 0;

  explicit Impl(int d) : device(d) {}
  PairwiseResult run(const PairwiseJob& job, BlockScorer& scorer, bool allow_fused);
};

Engine::Engine(int device) {
  cuda::DeviceGuard guard(device);
  impl_ = std::make_unique<Impl>(device);
}

Engine::~Engine() {
  if (impl_) {
    const cuda::QuietDeviceGuard guard(impl_->device);
    impl_.reset();
  }
}

int Engine::device() const { return impl_->device; }
double Engine::last_ms() const { return impl_->last_ms; }

BlockPlan Engine::plan(const PairwiseJob& job, const BlockScorer& scorer) const {
  detail::validate(job);
  cuda::DeviceGuard guard(impl_->device);
  const Plan plan = make_plan(job, scorer, impl_->device, true);
  return BlockPlan{plan.sizes.a, plan.sizes.b, plan.resident};
}

PairwiseResult Engine::run(const PairwiseJob& job, BlockScorer& scorer) {
  detail::validate(job);
  if (job.k > cuda::kMaxGpuK)
    throw UsageError(cat("k = ", job.k, " is larger than the GPU supports (", cuda::kMaxGpuK,
                         "); use --device cpu"));
  cuda::DeviceGuard guard(impl_->device);
  return impl_->run(job, scorer, true);
}

PairwiseResult pairwise(const PairwiseJob& job, BlockScorer& scorer, int device) {
  Engine engine(device);
  return engine.run(job, scorer);
}

PairwiseResult Engine::Impl::run(const PairwiseJob& job, BlockScorer& scorer, bool allow_fused) {
  const auto called = std::chrono::steady_clock::now();
  PairwiseResult result;
  if (job.rows_a == 0 || job.rows_b == 0) {
    if (job.k > 0) result.topk = TopKLists(job.rows_a, job.k);
    return result;
  }

  const Plan plan = make_plan(job, scorer, device, allow_fused);
  const std::size_t ta = plan.sizes.a, tb = plan.sizes.b;
  const auto blocks = detail::block_pairs(job, plan.sizes);
  result.blocks = blocks.size();
  const cudaStream_t cs = compute.get();

  std::byte* a_ptr = ensure(a_slot, ta * scorer.bytes_per_row_a());
  std::byte* b_ptrs[2] = {nullptr, nullptr};
  if (!plan.resident)
    for (int i = 0; i < 2; ++i) b_ptrs[i] = ensure(b_slots[i], tb * scorer.bytes_per_row_b());
  float* tile_ptr = ensure(tile, ta * tb);
  // Scores go from the scorer to the selection through L2, not device memory. The window
  // is the part of the tile this job uses: a window over a larger buffer (left by an
  // earlier, larger job) measured slower for the single-query path.
  const std::size_t tile_bytes = ta * tb * sizeof(float);
  if (tile_ptr != l2_tile || tile_bytes != l2_bytes) {
    cuda::keep_in_l2(tile_ptr, tile_bytes, cs);
    l2_tile = tile_ptr;
    l2_bytes = tile_bytes;
  }
  float* transposed_ptr = job.symmetric && job.k > 0 ? ensure(transposed, ta * tb) : nullptr;
  const std::size_t state_size = job.rows_a * static_cast<std::size_t>(plan.width);
  std::uint32_t* state_ptr = plan.width > 0 ? ensure(this->state, 2 * state_size) : nullptr;
  const cuda::TopKState state{reinterpret_cast<float*>(state_ptr), state_ptr + state_size, job.rows_a,
                              plan.width};
  gpu::CandidateLists lists;
  if (plan.fused) {
    lists.capacity = kCandidatesPerRow;
    lists.bar = static_cast<int>(job.k) - 1;
    lists.scores = ensure(candidate_scores, ta * kCandidatesPerRow);
    lists.indices = ensure(candidate_indices, ta * kCandidatesPerRow);
    lists.counts = ensure(candidate_counts, ta);
  }
  std::size_t hit_capacity = 0;
  if (job.threshold) {
    ensure(hits, plan.hit_capacity);
    hit_capacity = hits.size();
  }

  const auto host_start = std::chrono::steady_clock::now();
  start.record(cs);
  if (plan.width > 0) cuda::fill_empty(state, cs);
  if (plan.fused) {
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(lists.counts, 0, ta * sizeof(std::uint32_t), cs));
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(overflow.get(), 0, sizeof(unsigned), cs));
  }
  if (job.threshold)
    SIMKIT_CUDA_CHECK(cudaMemsetAsync(hit_count.get(), 0, sizeof(unsigned long long), cs));

  // B blocks alternate between two slots; the copy stream fills one while the compute
  // stream reads the other.
  std::size_t loaded[2] = {~std::size_t{0}, ~std::size_t{0}};
  const auto issue_load = [&](std::size_t n) {
    const std::size_t slot = n % 2;
    const RowRange rb = blocks[n].second;
    if (loaded[slot] == rb.begin) return;
    SIMKIT_CUDA_CHECK(cudaStreamWaitEvent(copy.get(), b_free[slot].get(), 0));
    scorer.load_b(rb, b_ptrs[slot], copy.get());
    b_ready[slot].record(copy.get());
    loaded[slot] = rb.begin;
  };
  if (!plan.resident && !blocks.empty()) issue_load(0);  // (a worker's share may be empty)

  std::size_t current_a = ~std::size_t{0};
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    const auto [ra, rb] = blocks[n];
    const std::size_t slot = n % 2;
    if (plan.fused && rb.begin > 0) {
      // The first block of B set this block of A's bars; the rest of B is offered.
      if (rb.begin == tb)
        for (std::size_t first = tb; first < job.rows_b;) {
          const std::size_t growth = std::max<std::size_t>(2, fused_expected() / static_cast<std::size_t>(plan.width));
          // A remainder shorter than this chunk joins it: one launch and merge fewer.
          std::size_t end = first * (growth + 1);
          if (job.rows_b - std::min(job.rows_b, end) < end - first) end = job.rows_b;
          const RowRange chunk{first, end};
          first = chunk.end;
          scorer.offer_candidates(a_ptr, ra, chunk, state.scores, state.indices, plan.width, lists, cs);
          cuda::merge_candidates(lists, ra.size(), ra.begin, state, overflow.get(), cs);
        }
      if (job.progress) job.progress->advance(ra.size() * rb.size());
      continue;
    }
    if (!plan.resident) SIMKIT_CUDA_CHECK(cudaStreamWaitEvent(cs, b_ready[slot].get(), 0));
    if (ra.begin != current_a) {
      scorer.load_a(ra, a_ptr, cs);
      current_a = ra.begin;
    }
    scorer.score(a_ptr, ra, b_ptrs[slot], rb, tile_ptr, rb.size(), cs);
    if (!plan.resident) {
      b_free[slot].record(cs);
      // The next block's copy overlaps this block's selection.
      if (n + 1 < blocks.size()) issue_load(n + 1);
    }

    const bool diagonal = job.symmetric && ra.begin == rb.begin;
    const detail::BlockMask row_mask{.skip_diagonal = job.exclude_self, .triangle = diagonal ? +1 : 0};
    if (plan.width > 0) {
      cuda::select_rows(tile_ptr, rb.size(), ra.size(), rb.size(), ra.begin, rb.begin, row_mask,
                        state, scratch, cs);
      if (job.symmetric) {
        // The same scores count for the rows of B, strictly below the diagonal.
        cuda::transpose(tile_ptr, ra.size(), rb.size(), rb.size(), transposed_ptr, ra.size(), cs);
        const detail::BlockMask col_mask{.skip_diagonal = true, .triangle = diagonal ? -1 : 0};
        cuda::select_rows(transposed_ptr, ra.size(), rb.size(), ra.size(), rb.begin, ra.begin,
                          col_mask, state, scratch, cs);
      }
    }
    if (job.threshold) {
      for (;;) {
        cuda::collect_hits(tile_ptr, rb.size(), ra.size(), rb.size(), ra.begin, rb.begin, row_mask,
                           *job.threshold, hits.get(), hit_count.get(), hit_capacity, cs);
        SIMKIT_CUDA_CHECK(cudaMemcpyAsync(host_count.get(), hit_count.get(),
                                          sizeof(unsigned long long), cudaMemcpyDeviceToHost, cs));
        compute.sync();
        const std::size_t found = *host_count.get();
        SIMKIT_CUDA_CHECK(cudaMemsetAsync(hit_count.get(), 0, sizeof(unsigned long long), cs));
        if (found <= hit_capacity) {
          const std::size_t old = result.pairs.size();
          result.pairs.resize(old + found);
          if (found > 0)
            SIMKIT_CUDA_CHECK(cudaMemcpyAsync(result.pairs.data() + old, hits.get(),
                                              found * sizeof(ScoredPair), cudaMemcpyDeviceToHost, cs));
          compute.sync();
          break;
        }
        // More hits than room: grow and collect this tile again.
        ensure(hits, found + found / 2);
        hit_capacity = hits.size();
      }
    }
    if (job.progress) job.progress->advance(ra.size() * rb.size());
  }

  // Each row's k best, packed on the device (the state has `width` slots a row), made while
  // the device works: a large answer is copied straight into its arrays, page-locked for
  // the copy (no pinned staging to make and free, no copy a row here); a small one lands in
  // the engine's pinned buffer and is copied out below.
  cuda::PageLock locks[2];
  const SyncOnExit copies_done{cs};  // (declared after the locks: waited for before they go)
  const std::size_t packed_size = job.rows_a * job.k;
  const bool small = packed_size * sizeof(std::uint32_t) < kLockAnswersBytes;
  if (plan.width > 0) {
    result.topk = TopKLists(job.rows_a, job.k);
    std::uint32_t* packed_ptr = ensure(packed, 2 * packed_size);
    // The scores' rows, then the indices' (state_ptr + state_size): 2 x rows_a rows.
    SIMKIT_CUDA_CHECK(cudaMemcpy2DAsync(packed_ptr, job.k * sizeof(std::uint32_t), state_ptr,
                                        plan.width * sizeof(std::uint32_t), job.k * sizeof(std::uint32_t),
                                        2 * job.rows_a, cudaMemcpyDeviceToDevice, cs));
    if (small) {
      if (small_answer.size() < 2 * packed_size) small_answer = cuda::PinnedBuffer<std::uint32_t>(2 * packed_size);
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(small_answer.get(), packed_ptr, 2 * packed_size * sizeof(std::uint32_t),
                                        cudaMemcpyDeviceToHost, cs));
    } else {
      void* answers[2] = {result.topk.scores.data(), result.topk.indices.data()};
      for (int i = 0; i < 2; ++i) {
        locks[i] = cuda::PageLock(answers[i], packed_size * sizeof(std::uint32_t));
        SIMKIT_CUDA_CHECK(cudaMemcpyAsync(answers[i], packed_ptr + i * packed_size,
                                          packed_size * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, cs));
      }
    }
  }
  if (plan.fused)
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(host_overflow.get(), overflow.get(), sizeof(unsigned),
                                      cudaMemcpyDeviceToHost, cs));
  stop.record(cs);
  const auto enqueued = std::chrono::steady_clock::now();
  compute.sync();
  copy.sync();
  last_ms = cuda::elapsed_ms(start, stop);
  // A candidate list overflowed (many scores tied near the bar): score tiles instead.
  if (plan.fused && *host_overflow.get() != 0) {
    if (print_stats) std::fprintf(stderr, "engine: fused candidates overflowed; scoring tiles\n");
    locks[0] = {}, locks[1] = {}, result = {};  // (not held through the second run)
    return run(job, scorer, false);
  }
  if (plan.width > 0 && small) {
    std::memcpy(result.topk.scores.data(), small_answer.get(), packed_size * sizeof(float));
    std::memcpy(result.topk.indices.data(), small_answer.get() + packed_size, packed_size * sizeof(std::uint32_t));
  }
  result.fused = plan.fused;
  detail::sort_pairs(result.pairs);
  if (print_stats) {
    const auto ms = [](auto from, auto to) { return std::chrono::duration<double, std::milli>(to - from).count(); };
    std::fprintf(stderr,
                 "engine: %zu blocks of %zu x %zu%s%s, buffers %.3f ms, host enqueue %.3f ms, device %.3f ms\n",
                 blocks.size(), ta, tb, plan.resident ? " (B resident)" : "", plan.fused ? " fused" : "",
                 ms(called, host_start), ms(host_start, enqueued), last_ms);
  }
  return result;
}

}  // namespace simkit::gpu
