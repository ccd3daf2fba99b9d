// Near-duplicate detection: the inputs of `simkit hash` and `simkit dedup`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "simkit/ctph.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/uninitialized_allocator.hpp"

namespace simkit {
class Progress;
}

namespace simkit::dedup {

// The files named by `paths`: files as given; directories only with `recursive`, then
// every regular file below them in sorted order (symbolic links followed as ssdeep -r
// follows them, cycles cut).
// Throws InputError for a path that does not exist, a directory without `recursive`,
// or a directory holding no file.
std::vector<std::string> list_files(const std::vector<std::string>& paths, bool recursive);

// The CTPH signature of every file, in the order given, hashed in parallel. Throws
// InputError naming the first file that cannot be read. Advances `progress` by one a file.
// Under mpirun each rank hashes its share and every rank gets every signature.
std::vector<std::string> hash_files(const std::vector<std::string>& files, Progress* progress);

// A pair of signatures (indices a < b into the list matched) and its score. A plain
// aggregate: `Match{}` is all zeros, `Match m;` is unset (as an int is).
struct Match {
  std::uint32_t a, b;
  int score;
  friend bool operator==(const Match&, const Match&) = default;
};
static_assert(std::is_trivial_v<Match>);

// The matchers' answers. Its resize leaves the new matches unset: a million hashes' 18
// million pairs (222 MB) are written in parallel, or by the GPU's copy, right after, and
// zeroing them first on one thread took 20-30 ms.
using MatchList = std::vector<Match, UninitializedAllocator<Match>>;

// Every pair of signatures scoring at least `threshold` (1..100), sorted by (a, b), on
// all cores. Only pairs whose block sizes are equal or double, and that are identical or
// share a 7-character substring in parts of the same block size, are scored: the others
// score 0. Advances `progress` by one a signature.
// With `share`, only the pairs (i, j) whose i lies in this worker's rows
// (share_rows(n, true, ...)).
MatchList match_all(const std::vector<ctph::Prepared>& signatures, int threshold,
                    Progress* progress = nullptr, Share share = {});

// The same pairs on CUDA device `device`, by the CPU's rule: the candidates (pairs sharing
// a 7-character substring at a block size, or identical) found by sorting on the device,
// then scored by bit-parallel kernels (where that index does not fit the device, every
// pair of compatible block sizes is scored instead). `device_ms`, when given, receives
// the device's time. A CPU-only build throws Failure.
// With `share`, the worker's share of the pairs (the workers of one job must all be given
// the same signatures and devices of one kind; match_shared sees to it), sorted by (a, b):
// gather and sort them.
MatchList match_all_gpu(const std::vector<ctph::Prepared>& signatures, int threshold, int device,
                        double* device_ms = nullptr, Share share = {});

// Readies CUDA device `device` for match_all_gpu: its context made and the matcher's
// kernels loaded (a few signatures matched), so that a caller can do it while it reads its
// input. Does nothing in a CPU-only build.
void prepare_gpu(int device);
// The same for the edit-rate pipeline's GPU stages (match_rates): their kernels loaded.
void prepare_rate_gpu(int device);

// The host's part of match_shared's GPU work on `signatures` (the 7-gram index's plan:
// block-size groups and codes, a tenth of a second at a million signatures), made ahead
// by a caller with time to spare while its GPUs start. Null in a CPU-only build.
// `memory_budget` (bytes, 0: as much as each GPU has free): what the index and its
// candidates may take on a GPU (without the index, the signatures and every pair's
// matches: at least 3 MiB of matches, and a 64-row tile's taken whole even past it).
struct GpuPlan;
std::shared_ptr<const GpuPlan> plan_gpu_match(const std::vector<ctph::Prepared>& signatures,
                                              std::size_t memory_budget = 0);
// The 7-gram index's device bytes and the room it may take on GPU `device` (the plan's
// memory budget, else half this process's share of the GPU's free memory). match_shared
// matches through the index where the first GPU of every rank has the room (as this call
// found it, where it was made: the free memory is not read again), and scores every
// compatible pair otherwise: work that grows as the square of the list. `bytes` is 0
// where no index can be built for the signatures (2^31 keys or more, a part outside base64).
struct GpuIndexRoom {
  std::size_t bytes = 0, room = 0;
  bool fits() const { return bytes != 0 && bytes <= room; }
};
GpuIndexRoom gpu_index_room(const GpuPlan& plan, int device);
// The plan's signature codes, which every GPU uploads, page-locked once a process through
// GPU `device`'s context, made here if the driver has not made it yet (what the first GPU
// worker does otherwise), by a program while its GPUs start. Leaves `device` current on
// the calling thread. Throws Failure where the device cannot be used.
void page_lock_plan(const GpuPlan& plan, int device);

// match_all or match_all_gpu shared out among the run's workers (each GPU of `devices`,
// or the CPU when it is empty, in each rank under mpirun; include/simkit/cluster.hpp):
// every pair on rank 0, sorted by (a, b); the other ranks get none. The GPUs of one
// process take pieces of its rows as they ask for them, so a GPU the driver readies first
// starts first. `plan`: plan_gpu_match of the same signatures, where the caller made it.
MatchList match_shared(const std::vector<ctph::Prepared>& signatures, int threshold,
                       const std::vector<int>& devices, Progress* progress = nullptr,
                       double* device_ms = nullptr, std::shared_ptr<const GpuPlan> plan = nullptr);

// The thesis's edit-rate pipeline (seed 000, chapter 4): every pair of documents a, b
// whose edit distance d (Levenshtein, unit costs) has d / (|a| + |b|) < rate.
// Candidates come from two filters, each then verified on the documents themselves:
//  - the thesis's: pairs whose rate signatures (ctph::rate_signature) have an edit rate
//    below rate * candidate_factor, verified up to the largest distance below the rate;
//  - the guarantee's: pairs whose signatures at their lengths' block sizes
//    (ctph::length_signature) are within what guaranteed_edits edits can change in them
//    (ctph::kSignatureCharsPerEdit each), verified up to guaranteed_edits edits.
// So every pair within guaranteed_edits edits (and below the rate) is found, whatever its
// length and content; pairs with more edits are found when their signatures agree as the
// thesis expects (see docs/dedup.md). Documents whose length-chosen signature would exceed
// kMaxPairString characters (pathologically repetitive text) meet every document of a
// length the rate allows in the guarantee's filter.
// The GPU kernels for the signature pairs: one thread a pair; the DP row in shared
// memory, or in global memory (the thesis's two), or Myers/Hyyrö bit vectors.
enum class EditKernel { shared_rows, global_rows, bit_parallel };
struct RateOptions {
  double rate = 0.1;
  std::size_t signature_length = 100;
  double candidate_factor = 3;
  std::uint32_t guaranteed_edits = 3;  // 0..16
  int device = -1;  // the CUDA device for the signature pairs; -1: the CPU
  std::vector<int> devices;  // several GPUs of this process (device: the first); empty: just `device`
  EditKernel kernel = EditKernel::bit_parallel;
  std::size_t memory_budget = 0;  // bytes of documents kept in memory for verification; 0: 1 GiB
  // Signature pairs whose documents' lengths already rule out the rate are not scored (a
  // row meets only a window of its group sorted by length): the same pairs are found, as
  // those were dropped after the filters anyway. false: every pair of compatible block
  // sizes is scored, as the thesis did.
  bool prune_by_length = true;
  // Rows of a group that meet their window together (one kernel call on a GPU); 0: 64 on
  // the CPU, 1,024 on a GPU (the fastest measured: bench/results/dedup.md).
  std::uint32_t run_rows = 0;
  // Characters of signatures a call scores at most (blocks of pairs over one set of them,
  // each group's once); more are scored by further calls. 0: 1 GiB. A group (one block
  // size) whose signatures pass 4 GiB is refused (Failure).
  std::size_t pair_set_chars = 0;
  // When set, called once the documents are signed (the signatures need no GPU): the GPUs
  // to use from then on (empty: the CPU), in place of `device` and `devices`. A caller that
  // starts its GPUs meanwhile (the driver takes a fraction of a second) overlaps that with
  // the signatures.
  std::function<std::vector<int>()> devices_when_signed;
};
struct RateMatch {
  std::uint32_t a = 0, b = 0;  // a < b, indices into the files
  std::uint32_t distance = 0;
  double rate = 0;             // distance / (|a| + |b|)
  friend bool operator==(const RateMatch&, const RateMatch&) = default;
};
// What the pipeline did, for --timings and the benchmark.
struct RateStats {
  std::size_t candidates = 0;
  std::uint64_t signature_pairs = 0;  // signature pairs the filters scored (both filters, all workers)
  std::size_t unsigned_documents = 0;  // verified against every document of a fitting length
  double signature_seconds = 0, candidate_seconds = 0, verify_seconds = 0;
  double device_wait_seconds = 0;  // after the signatures, for devices_when_signed
  double device_ms = 0;  // every stage's kernels
  // Within the verification (with GPUs): the pairs chosen and their documents made ready
  // (those sent during the candidates waited for, or packed), then the GPUs' part (wall,
  // and their kernels: the slowest GPU's, kernels side by side counted once) beside the
  // cores' (both from the documents' being ready).
  double pack_seconds = 0, gpu_verify_seconds = 0, gpu_verify_ms = 0, cores_verify_seconds = 0;
};
// Pairs sorted by (a, b). Throws InputError naming a file that cannot be read.
// Under mpirun (include/simkit/cluster.hpp) each rank signs its share of the files, the
// signature pairs are shared out among the run's workers (each GPU of `devices`, or the
// CPU, in each rank) by rows of every group, each rank verifies its own candidates, and
// the pairs come together on rank 0 (the other ranks get none).
std::vector<RateMatch> match_rates(const std::vector<std::string>& files, const RateOptions& options,
                                   RateStats* stats = nullptr, Progress* progress = nullptr);

// What `simkit dedup` (and simkit.dedup in Python) compares, named in the order the paths
// were given: a path is a file, a directory (every file below it, sorted) or an ssdeep
// hash list (recognised by its header line), whose entries count one each.
struct Inputs {
  std::vector<std::string> names;        // the file, or a list entry's file (its signature when it names none)
  std::vector<std::string> documents;    // the files to read
  std::vector<std::size_t> document_at;  // their places in names
  std::vector<std::string> signatures;   // by place in names; empty for documents until hashed
};
// Throws InputError for a path that does not exist, an empty directory or a malformed list.
Inputs gather_inputs(const std::vector<std::string>& paths);
// Hashes the documents into `signatures` (hash_files: progress one a file).
void hash_documents(Inputs& in, Progress* progress = nullptr);
// Every signature read for match_all (or, with Substrings::left_out, for the GPU's
// matchers alone); InputError naming the entry of a malformed one.
std::vector<ctph::Prepared> prepare_signatures(const Inputs& in, ctph::Substrings substrings = ctph::Substrings::made);
// Each signature's substrings added, on all cores (for the CPU's matcher).
void add_substrings(std::vector<ctph::Prepared>& prepared);

// ssdeep's list format: a header line, then `signature,"file"` a line, a '"' in the file
// name written as '\"'.
inline constexpr const char* kSsdeepHeader = "ssdeep,1.1--blocksize:hash:hash,filename";
std::string list_line(std::string_view signature, std::string_view file);

// One entry of an ssdeep list.
struct HashEntry {
  std::string signature;  // "blocksize:first:second"
  std::string file;       // empty when the line names none (ssdeep allows that)
};

// Whether `text` starts as an ssdeep list does (its header line).
bool is_hash_list(std::string_view text);

// Reads an ssdeep list (as `simkit hash` and `ssdeep` write it; CRLF line ends and blank
// lines allowed). `name` names the list in errors. Throws InputError at the first
// malformed line: its line and column, and what was expected there.
std::vector<HashEntry> read_hash_list(std::string_view text, const std::string& name);
// About how many entries a list holds, without reading it all: its size over the length
// of the lines in its first 64 KiB (exact for a list that short, blank lines counted); 0
// for a text that is not a list.
std::uint64_t estimated_entries(std::string_view text);

}  // namespace simkit::dedup
