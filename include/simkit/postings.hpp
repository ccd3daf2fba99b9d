// Posting-list intersection: an inverted index of sorted document-id lists and batched
// conjunctive (AND) queries over it, on the CPU (several algorithms) and on CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simkit/uninitialized_allocator.hpp"

namespace simkit {
class Progress;
}

namespace simkit::postings {

using DocId = std::uint32_t;

// Term t's list is ids[offsets[t] .. offsets[t + 1]), strictly increasing.
struct Index {
  std::vector<DocId> ids;
  std::vector<std::uint64_t> offsets{0};  // terms() + 1 entries
  std::vector<std::string> vocabulary;     // the word of each term; empty for an ExpIndex
  std::uint64_t documents = 0;             // every id is below this
  std::uint64_t first_document = 0;        // ... and at least this (a shard: documents_between)
  // Bitmaps of the dense lists (add_bitmaps): term bitmap_terms[i]'s list has bit
  // d - first_document set in bitmap_words[i * bitmap_stride() ..] for each of its ids d.
  std::vector<std::uint32_t> bitmap_terms;  // ascending
  std::vector<std::uint64_t> bitmap_words;

  std::size_t terms() const noexcept { return offsets.size() - 1; }
  std::span<const DocId> list(std::size_t term) const noexcept {
    return {ids.data() + offsets[term], static_cast<std::size_t>(offsets[term + 1] - offsets[term])};
  }
  std::size_t bitmap_stride() const noexcept { return static_cast<std::size_t>((documents - first_document + 63) / 64); }
  // The bitmap of `term`'s list, or nullptr when it has none or the list is not dense
  // (add_bitmaps' rule).
  const std::uint64_t* bitmap(std::size_t term) const noexcept;
  // The term of `word`, or -1 when the vocabulary lacks it (binary search: sorted words).
  std::int64_t find(std::string_view word) const noexcept;
};

// Keeps a bitmap of each list that holds 1/32 of the index's documents or more (and at
// least 1,024 ids), replacing any it had: the automatic CPU algorithm and the GPU test
// ids against these with one load. Built with every index simkit makes (postings build,
// an ExpIndex or .skp read, a shard); stored in .skp files. An index made by hand answers
// the same without them, only slower; call this after filling it (and again after
// changing its lists or documents). Throws Failure for an id outside
// [first_document, documents).
void add_bitmaps(Index& index);

// The seed's ExpIndex: little-endian uint32 [length][ids...] repeated, list i = term i.
// Throws InputError (with the byte offset) for a truncated list, or ids not strictly
// increasing (unsorted or duplicate).
Index read_exp_index(const std::string& path);
Index parse_exp_index(std::string_view bytes, const std::string& name);

// simkit's own index file (.skp; docs/formats.md): magic, version, sizes, the lists,
// the dense lists' bitmaps, the vocabulary, a checksum in 64 MiB pieces (version 3;
// version 2's one XXH3 pass is read too). Read refuses truncated,
// foreign or damaged files, and bitmaps that differ from their lists; a file without
// bitmaps (version 1, or written from an index without them) gets them built on reading.
Index read_index(const std::string& path);
Index parse_index(std::string_view bytes, const std::string& name);
void write_index(const Index& index, const std::string& path);

// Reads either kind, told apart by the magic (an ExpIndex has none).
Index read_any_index(const std::string& path);

// Document ids [begin, end).
struct DocRange {
  std::uint64_t begin = 0, end = 0;
};
// A shard of the index: every list cut to the ids in `range` (two binary searches a
// list), so that a query's answer on the shard is its answer on the whole index within
// the range. Term ids stay; the vocabulary is not copied (queries are parsed against the
// whole index). first_document and documents become the range's bounds.
Index documents_between(const Index& index, DocRange range);

// An index from a text collection: one document per line (document ids 0, 1, ... in the
// order read, empty lines included so that ids stay line numbers - 1), or one document
// per file. Words as tokenize() splits them (simkit/tokenize.hpp), lower-cased unless
// `keep_case`. The vocabulary is sorted, so term ids follow byte order.
struct BuildOptions {
  bool document_per_file = false;
  bool keep_case = false;
  std::size_t min_count = 1;  // terms in fewer documents than this are left out
};
Index build_index(const std::vector<std::string>& files, const BuildOptions& options,
                  Progress* progress = nullptr);
// The same from documents in memory, one a string (document_per_file is ignored); a
// document that is not UTF-8 is named "documents:N" (N from 1).
Index index_texts(const std::vector<std::string>& texts, const BuildOptions& options);

// A batch of queries: query q's terms are terms[offsets[q] .. offsets[q + 1]), at least one.
struct Queries {
  std::vector<std::uint32_t> terms;
  std::vector<std::uint64_t> offsets{0};
  std::size_t size() const noexcept { return offsets.size() - 1; }
  std::span<const std::uint32_t> query(std::size_t q) const noexcept {
    return {terms.data() + offsets[q], static_cast<std::size_t>(offsets[q + 1] - offsets[q])};
  }
};

// The seed's ExpQuery text: one query per line, term ids separated by blanks. With
// `words`, the line's words instead (looked up in the vocabulary, lower-cased unless
// `keep_case`); a word the index lacks has an empty list. A term id out of range, a
// blank line or a malformed number: InputError with line and column.
Queries parse_queries(std::string_view text, const std::string& name, const Index& index, bool words,
                      bool keep_case = false);
Queries read_queries(const std::string& path, const Index& index, bool words, bool keep_case = false);

// The CPU algorithms (docs/postings.md):
//   svs        lists shortest first, the running result binary-searched in each next list
//   adaptive   element by element: the largest candidate so far is sought in every list
//   hash       the seed's buckets: each list cut by the high bits of its ids
//   galloping  svs with exponential (galloping) search
//   simd       pairwise AVX2 block intersection (plain merge without AVX2)
//   bitmap     Roaring bitmaps (CRoaring) ANDed
//   automatic  list by list: lists the index keeps a bitmap of (add_bitmaps) tested id by
//              id with one load, the rest by galloping or AVX2 blocks as their lengths
//              suggest
enum class Algorithm { svs, adaptive, hash, galloping, simd, bitmap, automatic };
const char* algorithm_name(Algorithm algorithm) noexcept;
// Throws UsageError naming the choices for an unknown name.
Algorithm parse_algorithm(std::string_view name);

using ::simkit::UninitializedAllocator;
using IdVector = std::vector<DocId, UninitializedAllocator<DocId>>;

// Query q's answer is ids[offsets[q] .. offsets[q + 1]), ascending; with `count_only`
// ids stays empty and counts holds the sizes.
struct Results {
  IdVector ids;
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint64_t> counts;
  // Where intersect_cpu puts each query's answer before the answers are joined in `ids`,
  // kept (when the caller passes its Results) so that a Results reused batch after batch
  // does not allocate and free every answer again (it holds the largest batch's answers
  // twice); the intersect_cpu that returns a new Results leaves it empty.
  std::vector<std::vector<DocId>> per_query;
  std::span<const DocId> answer(std::size_t q) const noexcept {
    return {ids.data() + offsets[q], static_cast<std::size_t>(offsets[q + 1] - offsets[q])};
  }
};

// Every query of the batch on all cores (queries in parallel).
Results intersect_cpu(const Index& index, const Queries& queries, Algorithm algorithm,
                      bool count_only = false, Progress* progress = nullptr);
// The same into `results`, whose storage is reused: batch after batch, no allocation
// once it is large enough. Should the batch throw, `results` is left empty.
void intersect_cpu(const Index& index, const Queries& queries, Algorithm algorithm, Results& results,
                   bool count_only = false, Progress* progress = nullptr);

// One query's lists intersected by `algorithm`, appended to `out` (for tests and benches).
void intersect_lists(std::span<const std::span<const DocId>> lists, Algorithm algorithm,
                     std::vector<DocId>& out);

// The GPU kernels: one thread a candidate (an id of the query's shortest list), binary
// search in the other lists; `flat` (the default: measured faster on the H100,
// bench/results/postings.md) searches whole lists; `sliced` first narrows each other list
// to the range of the block's 256 candidates (the seed's "precise search").
enum class GpuKernel { sliced, flat };
struct GpuOptions {
  int device = 0;
  GpuKernel kernel = GpuKernel::flat;
  bool managed_memory = false;     // the resident index in unified memory, not copied explicitly
  bool resident = true;            // false: never keep the index; each batch copies its lists
  std::size_t memory_budget = 0;   // bytes of GPU memory to use; 0 = most of what is free
};

// An index made resident on a GPU once (when it fits half the budget and options.resident;
// otherwise each
// batch copies the lists it names), then queried batch after batch: a batch's
// candidates are tested in one launch, results compacted on the device (prefix sum) and
// copied back once; a batch whose lists or candidates exceed the budget runs in parts.
// `index` must outlive the GpuIndex. A CPU-only build throws Failure.
class GpuIndex {
 public:
  GpuIndex(const Index& index, const GpuOptions& options);
  ~GpuIndex();
  GpuIndex(const GpuIndex&) = delete;
  GpuIndex& operator=(const GpuIndex&) = delete;

  bool resident() const noexcept;
  // `device_ms`, when given, receives the time of the batch on the device (CUDA events:
  // table uploads, kernels, compaction and the copy back).
  Results intersect(const Queries& queries, bool count_only = false, double* device_ms = nullptr);
  // The same into `results`, whose storage is reused (see intersect_cpu); its ids are
  // page-locked on first use (copies keep it on the heap), so that the answers come down
  // into them directly.
  void intersect(const Queries& queries, Results& results, bool count_only = false, double* device_ms = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One batch on a fresh GpuIndex.
Results intersect_gpu(const Index& index, const Queries& queries, const GpuOptions& options,
                      bool count_only = false, double* device_ms = nullptr);

// --- several workers: GPUs of one process, ranks under mpirun (simkit/cluster.hpp) ---

// The answers of one batch on shards of ascending document ranges, as one: each query's
// ids one shard after the other (so still ascending), its counts summed.
Results concatenate(const std::vector<Results>& shards, std::size_t queries, bool count_only);

// Rank 0's batch of queries on every rank (every rank calls it; what the others pass is
// ignored): rank 0 reads and parses the queries, the ranks answer them together.
Queries broadcast_queries(Queries queries);

struct DistributedOptions {
  Algorithm algorithm = Algorithm::automatic;  // the CPU's
  std::vector<int> gpus;  // the CUDA devices this process drives, a worker each; empty: the CPU
  GpuOptions gpu;         // kernel and memory of each GPU worker (its device is set from gpus)
};

// The index shared out among the workers of a run: one a GPU (or the CPU) in each
// process, numbered across the ranks (cluster::parts); worker w of W keeps the lists of
// documents share_rows(documents, w, W) (simkit/pairwise.hpp), so W workers hold 1/W of
// the postings each. intersect() answers a batch on every worker, each on its documents,
// and concatenates the answers in document order on rank 0, which gets what one process
// gets; the other ranks get empty Results. Every rank calls intersect() with the same
// queries. With a single worker in the whole run, the index is searched as it is (no
// copy). Constructing it is collective (every rank, in the same order).
class DistributedIndex {
 public:
  DistributedIndex(Index index, const DistributedOptions& options);
  ~DistributedIndex();
  DistributedIndex(const DistributedIndex&) = delete;
  DistributedIndex& operator=(const DistributedIndex&) = delete;

  // `device_ms`: the slowest GPU worker's time on the device (unchanged on the CPU).
  Results intersect(const Queries& queries, bool count_only = false, Progress* progress = nullptr,
                    double* device_ms = nullptr);
  // This process's workers' documents, in worker order.
  std::vector<DocRange> local_documents() const;
  std::size_t workers() const noexcept;  // in the whole run

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace simkit::postings
