// Batched posting-list intersection on the GPU (docs/postings.md).
//
// Every query's candidates are the ids of its shortest list, cut into slices of 256:
// one block a slice, one thread a candidate, which is binary-searched in the query's
// other lists, or, where the index keeps a bitmap of a list (and it is resident), tested
// with one load. With narrowing (the seed's "precise search"), the block first finds
// where its first and last candidates fall in each other list, so the threads search
// only that range. Found candidates are compacted by cub::DeviceSelect (a prefix sum):
// the survivors stay in candidate order, which is query order and ascending ids.
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <array>
#include <cstring>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "postings/algorithms.hpp"
#include "postings/gpu_tables.hpp"
#include "postings/lists.hpp"
#include "postings/phases.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"
#include "simkit/postings.hpp"

namespace simkit::postings {

namespace {

constexpr std::uint32_t kSlice = 256;   // candidates a block
constexpr std::uint32_t kNarrowed = 32; // other lists a block narrows (the rest: whole lists)

using detail::GpuList;
using detail::GpuSlice;
using detail::kNoBitmap;

// The part's tables (postings/gpu_tables.hpp), laid out back to back in one upload.
struct Tables {
  const GpuList* entries;
  const std::uint32_t* query_first;
  const std::uint64_t* candidate_first;
  const GpuSlice* slices;
};

__device__ __forceinline__ std::uint32_t lower_bound(const DocId* list, std::uint32_t lo, std::uint32_t hi, DocId x) {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (list[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The resident bitmaps: bit d - base of a list's words.
struct Bitmaps {
  const std::uint64_t* words;
  DocId base;
};

template <bool Narrow>
__global__ void __launch_bounds__(kSlice) test_candidates(const DocId* __restrict__ ids, Bitmaps bitmaps, Tables t,
                                                          DocId* __restrict__ values, unsigned char* __restrict__ flags,
                                                          std::uint32_t* __restrict__ slice_found) {
  __shared__ std::uint32_t lo[kNarrowed], hi[kNarrowed];
  const GpuSlice s = t.slices[blockIdx.x];
  const std::uint32_t query = s.query, start = s.start;
  const std::uint32_t first = t.query_first[query];  // the shortest list's entry
  const std::uint32_t others = t.query_first[query + 1] - first - 1;
  const GpuList own = t.entries[first];
  const DocId* shortest = ids + own.start + start;
  const std::uint32_t n = min(kSlice, own.length - start);
  if (Narrow) {
    for (std::uint32_t j = threadIdx.x; j < others && j < kNarrowed; j += blockDim.x) {
      const GpuList l = t.entries[first + 1 + j];
      const DocId* list = ids + l.start;
      const DocId last = shortest[n - 1];
      lo[j] = lower_bound(list, 0, l.length, shortest[0]);
      hi[j] = last == ~DocId{0} ? l.length : lower_bound(list, lo[j], l.length, last + 1);
    }
    __syncthreads();
  }
  bool found = false;
  if (threadIdx.x < n) {
    const DocId x = shortest[threadIdx.x];
    found = true;
    for (std::uint32_t j = 0; j < others && found; ++j) {
      const GpuList l = t.entries[first + 1 + j];
      if (l.bitmap != kNoBitmap) {
        const DocId d = x - bitmaps.base;
        found = ((__ldg(bitmaps.words + l.bitmap + d / 64) >> (d % 64)) & 1) != 0;
        continue;
      }
      const DocId* list = ids + l.start;
      std::uint32_t a = 0, b = l.length;
      if (Narrow && j < kNarrowed) a = lo[j], b = hi[j];
      const std::uint32_t p = lower_bound(list, a, b, x);
      found = p < b && list[p] == x;
    }
    const std::uint64_t c = t.candidate_first[query] + start + threadIdx.x;
    values[c] = x;
    flags[c] = found ? 1 : 0;
  }
  const int count = __syncthreads_count(found);
  if (threadIdx.x == 0) slice_found[blockIdx.x] = static_cast<std::uint32_t>(count);
}

// Device memory that is either plain (explicit copies) or managed (unified memory).
struct ResidentIds {
  DocId* ptr = nullptr;
  bool managed = false;
  ResidentIds() = default;
  ResidentIds(const ResidentIds&) = delete;
  ResidentIds& operator=(const ResidentIds&) = delete;
  ~ResidentIds() {
    if (ptr != nullptr) cudaFree(ptr);
  }
};

template <typename T>
std::size_t bytes_of(std::size_t n) {
  return (n * sizeof(T) + 255) / 256 * 256;
}

// Buffers kept between batches, grown (by a quarter more) when a batch needs more.
template <typename Buffer>
void ensure(Buffer& buffer, std::size_t n) {
  if (buffer.size() < n) buffer = Buffer(n + n / 4);
}

// `ids` grown to `n` (uninitialised); page-locked ids that cannot grow (the host short of
// lockable memory) move to the heap, and the answers come down the staged way.
void grow_answers(IdVector& ids, std::size_t n) {
  if (ids.get_allocator().memory == nullptr) return ids.resize(n);
  try {
    ids.resize(n);
  } catch (const Failure&) {
    IdVector heap;
    heap.reserve(n);
    heap.assign(ids.begin(), ids.end());
    heap.resize(n);
    ids = std::move(heap);
  }
}

}  // namespace

// The answers come down in pieces, the host copying each into the batch's `Results` while
// the next one is on its way (Brown's 555,554 answers: the step took 0.16-0.22 ms in four
// pieces against 0.26-0.38 ms in one on an H200 host, one call: bench/results/postings.md).
constexpr std::size_t kAnswerPieces = 4;
constexpr std::size_t kSmallestPiece = std::size_t{1} << 16;  // ids

struct GpuIndex::Impl {
  const Index& index;
  GpuOptions options;
  std::size_t budget = 0;
  ResidentIds resident;  // the whole index, when it fits half the budget
  cuda::DeviceBuffer<std::uint64_t> bitmaps;  // the index's bitmaps, with a resident index
  std::vector<GpuList> lists;                 // every term's list, with a resident index (host: copied per entry)
  cuda::Stream stream;
  // Per-batch buffers, reused: tables (host and device), candidates, flags, answers,
  // per-slice counts, CUB's scratch, and the gathered lists when not resident.
  cuda::PinnedBuffer<char> host_tables;
  cuda::DeviceBuffer<char> d_tables, d_temp;
  cuda::DeviceBuffer<DocId> d_values, d_out, d_gathered;
  cuda::DeviceBuffer<unsigned char> d_flags;
  cuda::DeviceBuffer<std::uint32_t> d_slice_found;
  cuda::DeviceBuffer<int> d_selected{1};
  cuda::PinnedBuffer<DocId> host_lists, host_found;
  cuda::PinnedBuffer<std::uint32_t> host_slice_found;
  cuda::Event start{cudaEventDefault}, stop{cudaEventDefault};
  std::array<cuda::Event, kAnswerPieces> piece_down;
  detail::GpuTables host;  // the part's tables, kept between batches (cleared, not freed)
  Impl(const Index& i, const GpuOptions& o) : index(i), options(o) {}
  void run_part(const Queries& queries, std::size_t q_begin, std::size_t q_end, bool count_only, Results& results,
                double& ms);
  void answer_batch(const Queries& queries, Results& results, bool count_only, double* device_ms);
};

GpuIndex::GpuIndex(const Index& index, const GpuOptions& options) {
  const cuda::DeviceGuard guard(options.device);
  impl_ = std::make_unique<Impl>(index, options);
  const GpuMemory memory = gpu_memory(options.device);
  impl_->budget = options.memory_budget != 0 ? options.memory_budget : memory.free / 10 * 8;
  const std::size_t bytes = index.ids.size() * sizeof(DocId);
  const std::size_t bitmap_bytes = index.bitmap_words.size() * sizeof(std::uint64_t);
  if (options.resident && bytes > 0 && bytes + bitmap_bytes <= impl_->budget / 2) {
    impl_->bitmaps = cuda::to_device(index.bitmap_words.data(), index.bitmap_words.size());
    impl_->lists = detail::resident_lists(index);
    ResidentIds& r = impl_->resident;
    r.managed = options.managed_memory;
    if (r.managed) {
      SIMKIT_CUDA_CHECK(cudaMallocManaged(reinterpret_cast<void**>(&r.ptr), bytes));
      std::memcpy(r.ptr, index.ids.data(), bytes);  // pages move to the GPU on first touch
    } else {
      r.ptr = static_cast<DocId*>(cuda::device_alloc(bytes));
      SIMKIT_CUDA_CHECK(cudaMemcpy(r.ptr, index.ids.data(), bytes, cudaMemcpyHostToDevice));
    }
  }
}

GpuIndex::~GpuIndex() {
  if (impl_ == nullptr) return;
  const cuda::QuietDeviceGuard guard(impl_->options.device);
  impl_.reset();
}

bool GpuIndex::resident() const noexcept { return impl_->resident.ptr != nullptr; }

void GpuIndex::Impl::run_part(const Queries& queries, std::size_t q_begin, std::size_t q_end, bool count_only,
                              Results& results, double& ms) {
  detail::Phases phases("gpu part");
  const bool is_resident = resident.ptr != nullptr;
  detail::build_gpu_tables(index, queries, q_begin, q_end, is_resident ? &lists : nullptr, kSlice, host);
  const auto& [entries, query_first, candidate_first, part_query, slices, terms, gather_terms, gather_start, gathered] =
      host;
  const std::uint64_t candidates = candidate_first.back();
  if (candidates == 0) return;

  // One upload for every table.
  const std::size_t o_entries = 0, o_qfirst = o_entries + bytes_of<GpuList>(entries.size()),
                    o_cfirst = o_qfirst + bytes_of<std::uint32_t>(query_first.size()),
                    o_slices = o_cfirst + bytes_of<std::uint64_t>(candidate_first.size()),
                    table_bytes = o_slices + bytes_of<GpuSlice>(slices.size());
  ensure(host_tables, table_bytes);
  const auto put = [&](std::size_t at, const auto& v) {
    std::memcpy(host_tables.get() + at, v.data(), v.size() * sizeof(v[0]));
  };
  put(o_entries, entries);
  put(o_qfirst, query_first);
  put(o_cfirst, candidate_first);
  put(o_slices, slices);
  ensure(d_tables, table_bytes);
  const Tables tables{reinterpret_cast<const GpuList*>(d_tables.get() + o_entries),
                      reinterpret_cast<const std::uint32_t*>(d_tables.get() + o_qfirst),
                      reinterpret_cast<const std::uint64_t*>(d_tables.get() + o_cfirst),
                      reinterpret_cast<const GpuSlice*>(d_tables.get() + o_slices)};
  ensure(d_values, candidates);
  ensure(d_flags, candidates);
  if (!count_only) ensure(d_out, candidates);
  ensure(d_slice_found, slices.size());
  std::size_t temp_bytes = 0;
  if (!count_only)
    SIMKIT_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, d_values.get(), d_flags.get(), d_out.get(),
                                                 d_selected.get(), static_cast<int>(candidates), stream.get()));
  ensure(d_temp, temp_bytes);

  // Lists not resident: the part's lists gathered and copied once.
  if (!is_resident) {
    ensure(host_lists, gathered);
    detail::gather_lists(index, host, host_lists.get());
    ensure(d_gathered, gathered);
  }
  const DocId* ids = is_resident ? resident.ptr : d_gathered.get();

  phases.mark("tables");
  start.record(stream.get());
  if (!is_resident)
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(d_gathered.get(), host_lists.get(), gathered * sizeof(DocId),
                                      cudaMemcpyHostToDevice, stream.get()));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(d_tables.get(), host_tables.get(), table_bytes, cudaMemcpyHostToDevice, stream.get()));
  const auto grid = static_cast<unsigned>(slices.size());
  const Bitmaps bits{bitmaps.get(), static_cast<DocId>(index.first_document)};
  if (options.kernel == GpuKernel::sliced)
    test_candidates<true>
        <<<grid, kSlice, 0, stream.get()>>>(ids, bits, tables, d_values.get(), d_flags.get(), d_slice_found.get());
  else
    test_candidates<false>
        <<<grid, kSlice, 0, stream.get()>>>(ids, bits, tables, d_values.get(), d_flags.get(), d_slice_found.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  if (!count_only)
    SIMKIT_CUDA_CHECK(cub::DeviceSelect::Flagged(d_temp.get(), temp_bytes, d_values.get(), d_flags.get(), d_out.get(),
                                                 d_selected.get(), static_cast<int>(candidates), stream.get()));
  ensure(host_slice_found, slices.size());
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(host_slice_found.get(), d_slice_found.get(), slices.size() * sizeof(std::uint32_t),
                                    cudaMemcpyDeviceToHost, stream.get()));
  stream.sync();
  phases.mark("device");
  std::uint64_t found = 0;
  for (std::size_t s = 0; s < slices.size(); ++s) {
    results.counts[part_query[slices[s].query]] += host_slice_found.get()[s];
    found += host_slice_found.get()[s];
  }
  if (count_only || found == 0) {
    stop.record(stream.get());
    stream.sync();
    ms += cuda::elapsed_ms(start, stop);
    return;
  }
  // The part's answers, in query order, after what earlier parts found. Into `results`
  // itself where its ids are page-locked (a Results the caller reuses: one copy at the
  // link's rate); else through pinned memory (a copy into pageable memory is staged by
  // the driver, slower), in pieces, each copied out while the next comes down.
  const std::size_t old = results.ids.size();
  grow_answers(results.ids, old + found);  // (uninitialised: written by the copies)
  if (results.ids.get_allocator().memory == cuda::pinned_host_memory()) {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(results.ids.data() + old, d_out.get(), found * sizeof(DocId),
                                      cudaMemcpyDeviceToHost, stream.get()));
    stop.record(stream.get());
  } else {
    ensure(host_found, found);
    const std::size_t pieces = std::clamp<std::size_t>(found / kSmallestPiece, 1, kAnswerPieces);
    const auto piece_begin = [&](std::size_t i) { return found * i / pieces; };
    for (std::size_t i = 0; i < pieces; ++i) {
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(host_found.get() + piece_begin(i), d_out.get() + piece_begin(i),
                                        (piece_begin(i + 1) - piece_begin(i)) * sizeof(DocId), cudaMemcpyDeviceToHost,
                                        stream.get()));
      piece_down[i].record(stream.get());
    }
    stop.record(stream.get());
    for (std::size_t i = 0; i < pieces; ++i) {
      SIMKIT_CUDA_CHECK(cudaEventSynchronize(piece_down[i].get()));
      copy_ids(host_found.get() + piece_begin(i), piece_begin(i + 1) - piece_begin(i),
               results.ids.data() + old + piece_begin(i));
    }
  }
  SIMKIT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  phases.mark("answers down and copied");
  ms += cuda::elapsed_ms(start, stop);
}

Results GpuIndex::intersect(const Queries& queries, bool count_only, double* device_ms) {
  Results results;  // on the heap: page-locking memory for one batch costs more than it saves
  impl_->answer_batch(queries, results, count_only, device_ms);
  return results;
}

void GpuIndex::intersect(const Queries& queries, Results& results, bool count_only, double* device_ms) {
  try {
    // A Results reused batch after batch: its ids page-locked once, so that the answers
    // come down into it directly.
    const IdVector::allocator_type pinned(cuda::pinned_host_memory());
    if (!count_only && results.ids.get_allocator() != pinned) results.ids = IdVector(pinned);
    impl_->answer_batch(queries, results, count_only, device_ms);
  } catch (...) {
    // Never half a batch; and no copy still landing in memory about to be freed.
    const cuda::QuietDeviceGuard guard(impl_->options.device);
    cudaStreamSynchronize(impl_->stream.get());
    results = Results();
    throw;
  }
}

void GpuIndex::Impl::answer_batch(const Queries& queries, Results& results, bool count_only, double* device_ms) {
  const cuda::DeviceGuard guard(options.device);
  results.ids.clear();
  results.offsets.assign(1, 0);
  results.counts.assign(queries.size(), 0);
  double ms = 0;
  // Parts: queries in order while their lists (when not resident) and candidates (id,
  // flag, output: 9 bytes each) fit the budget's other half.
  const std::size_t room = budget / 2;
  const std::uint64_t candidate_cap = std::uint64_t{1} << 30;  // cub's int item count
  std::size_t begin = 0;
  std::uint64_t bytes = 0, candidates = 0;
  for (std::size_t q = 0; q <= queries.size(); ++q) {
    std::uint64_t need_bytes = 0, need_candidates = 0;
    if (q < queries.size()) {
      need_candidates = detail::shortest_list(index, queries.query(q));
      need_bytes = need_candidates * 9;
      if (resident.ptr == nullptr) need_bytes += detail::listed_ids(index, queries.query(q)) * sizeof(DocId);
    }
    const bool full = q == queries.size() || bytes + need_bytes > room || candidates + need_candidates > candidate_cap;
    if (full && q > begin) {
      run_part(queries, begin, q, count_only, results, ms);
      begin = q;
      bytes = candidates = 0;
    }
    if (q == queries.size()) break;
    if (need_bytes > room || need_candidates > candidate_cap) {
      // One query too large for the GPU alone: answered on the CPU.
      std::vector<std::span<const DocId>> lists;
      for (const std::uint32_t t : queries.query(q)) lists.push_back(list_of(index, t));
      std::vector<DocId> answer;
      intersect_lists(lists, Algorithm::automatic, answer);
      results.counts[q] = answer.size();
      if (!count_only) results.ids.insert(results.ids.end(), answer.begin(), answer.end());
      begin = q + 1;
      continue;
    }
    bytes += need_bytes;
    candidates += need_candidates;
  }
  for (std::size_t q = 0; q < queries.size(); ++q)
    results.offsets.push_back(results.offsets.back() + (count_only ? 0 : results.counts[q]));
  if (device_ms != nullptr) *device_ms = ms;
}

Results intersect_gpu(const Index& index, const Queries& queries, const GpuOptions& options, bool count_only,
                      double* device_ms) {
  GpuIndex gpu(index, options);
  return gpu.intersect(queries, count_only, device_ms);
}

}  // namespace simkit::postings
