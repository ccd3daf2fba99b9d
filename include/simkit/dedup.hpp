// Near-duplicate detection: the inputs of `simkit hash` and `simkit dedup`.
#pragma once

#include <cstdint>
#include <string>
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

// Every pair of signatures scoring at least `threshold` (1..100), sorted by (a, b): only
// pairs whose block sizes are equal or double meet; the comparisons run in parallel.
std::vector<Match> match_all(const std::vector<ctph::Prepared>& signatures, int threshold);

// ssdeep's list format: a header line, then `signature,"file"` a line.
inline constexpr const char* kSsdeepHeader = "ssdeep,1.1--blocksize:hash:hash,filename";

}  // namespace simkit::dedup
