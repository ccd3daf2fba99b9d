// Near-duplicate detection: the inputs of `simkit hash` and `simkit dedup`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simkit/ctph.hpp"

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
std::vector<std::string> hash_files(const std::vector<std::string>& files, Progress* progress);

// A pair of signatures (indices a < b into the list matched) and its score.
struct Match {
  std::uint32_t a = 0, b = 0;
  int score = 0;
  friend bool operator==(const Match&, const Match&) = default;
};

// Every pair of signatures scoring at least `threshold` (1..100), sorted by (a, b), on
// all cores. Only pairs whose block sizes are equal or double, and that are identical or
// share a 7-character substring in parts of the same block size, are scored: the others
// score 0. Advances `progress` by one a signature.
std::vector<Match> match_all(const std::vector<ctph::Prepared>& signatures, int threshold,
                             Progress* progress = nullptr);

// The same pairs on CUDA device `device`: every pair of compatible block sizes scored by
// bit-parallel kernels. `device_ms`, when given, receives the kernels' time. A CPU-only
// build throws Failure.
std::vector<Match> match_all_gpu(const std::vector<ctph::Prepared>& signatures, int threshold, int device,
                                 double* device_ms = nullptr);

// The thesis's edit-rate pipeline (seed 000, chapter 4): every pair of documents a, b
// whose edit distance d (Levenshtein, unit costs) has d / (|a| + |b|) < rate.
// Candidates are the pairs whose rate signatures (ctph::rate_signature) have an edit rate
// below rate * candidate_factor; each is then verified on the documents themselves.
// The GPU kernels for the signature pairs: one thread a pair; the DP row in shared
// memory, or in global memory (the thesis's two), or Myers/Hyyrö bit vectors.
enum class EditKernel { shared_rows, global_rows, bit_parallel };
struct RateOptions {
  double rate = 0.1;
  std::size_t signature_length = 100;
  double candidate_factor = 3;
  int device = -1;  // the CUDA device for the signature pairs; -1: the CPU
  EditKernel kernel = EditKernel::bit_parallel;
  std::size_t memory_budget = 0;  // bytes of documents kept in memory for verification; 0: 1 GiB
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
  double signature_seconds = 0, candidate_seconds = 0, verify_seconds = 0;
  double device_ms = 0;
};
// Pairs sorted by (a, b). Throws InputError naming a file that cannot be read.
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
// Every signature read for match_all; InputError naming the entry of a malformed one.
std::vector<ctph::Prepared> prepare_signatures(const Inputs& in);

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

}  // namespace simkit::dedup
