// Lists of matches each sorted by (a, b), no pair in two of them (the workers' shares),
// made one sorted list on all cores: merged, not sorted again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "simkit/dedup.hpp"

namespace simkit::dedup {

// The answers' order: by a, then b (one 64-bit comparison).
inline bool by_pair(const Match& p, const Match& q) {
  return (std::uint64_t{p.a} << 32 | p.b) < (std::uint64_t{q.a} << 32 | q.b);
}

// Every worker's runs as one list of runs.
std::vector<MatchList> flatten(std::vector<std::vector<MatchList>> runs);

// runs[r] sorted by (a, b); the result holds every match of every run, sorted by (a, b).
MatchList merge_sorted_runs(std::vector<MatchList> runs);

// The same for runs lying one after another in `all`, run r ending at ends[r].
MatchList merge_sorted_runs(MatchList all, const std::vector<std::size_t>& ends);

}  // namespace simkit::dedup
