// The two GPU matchers behind match_all_gpu (simkit/dedup.hpp), apart so that tests can
// drive each: the 7-gram index (the default) and every compatible pair scored.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"

namespace simkit::dedup {

// The CPU's rule on the device: candidates are the pairs that share a key (a part's
// 7-character substring at its block size, or the whole signature), found by sorting the
// keys; a signature whose key lists hold more than its compatible later signatures meets
// those instead. The candidates are made, sorted, made unique and scored `pair_budget`
// at a time (0: as many as half this process's share of the device's free memory holds).
// With `share`, the rows (signatures in block-size order) holding the worker's share of
// the candidates. `steps`, when given, receives each step's wall seconds (the
// benchmark's breakdown).
using StepTimes = std::vector<std::pair<std::string, double>>;

// The host's part of the index, made once (on all cores) and shared by a process's GPU
// workers: the signatures in block-size order as 6-bit codes, their groups, where each
// one's keys go. Null where the index cannot be built for these signatures (2^31 keys or
// more, 2^21 block sizes or more, a part outside base64).
struct IndexPlan;
std::shared_ptr<const IndexPlan> plan_index(const std::vector<ctph::Prepared>& signatures);

MatchList match_indexed_gpu(const IndexPlan& plan, int threshold, int device, double* device_ms, Share share,
                            std::size_t pair_budget = 0, StepTimes* steps = nullptr);
// The same, planned here: empty (no value) where the plan is null.
std::optional<MatchList> match_indexed_gpu(const std::vector<ctph::Prepared>& signatures, int threshold,
                                           int device, double* device_ms, Share share,
                                           std::size_t pair_budget = 0, StepTimes* steps = nullptr);

// The rows of several workers' shares (parts [share.part, share.part + held) of
// share.parts), cut into `pieces` pieces of about equal candidates and dealt to the
// workers as each asks for the next: a worker whose GPU is ready early, or is faster,
// takes more. One dealer serves every worker of a process.
struct RowDealer {
  std::size_t held = 1;
  std::size_t pieces = 1;
  std::atomic<std::size_t> next{0};
  bool done() const { return next.load() >= pieces; }
};

// The same as match_indexed_gpu, the rows dealt by `dealer` (null: the share's rows, as
// there), the matches as sorted runs for the caller to merge (merge_sorted_runs): a run a
// chunk of rows; with a dealer, the matches of all the pieces the worker took wait on its
// device and come down as one run (and as one more each time they would pass a quarter
// of a chunk's budget).
std::vector<MatchList> match_indexed_runs(const IndexPlan& plan, int threshold, int device,
                                          double* device_ms, Share share, RowDealer* dealer,
                                          std::size_t pair_budget = 0, StepTimes* steps = nullptr);

// match_indexed_runs on each of a process's GPUs `devices`, their rows (parts
// [share.part, share.part + devices.size()) of share.parts) dealt to them as they ask
// (four pieces a GPU): the matches sorted by (a, b). A GPU's matches wait on it; then
// the GPUs share them out in ranges of (a, b) (peer to peer), and each sorts its range and
// copies it down into its place, all at once (where they do not fit, each GPU's matches
// are sorted on it and the runs merged here). The first GPU must
// hold the index (the caller checked); another that cannot leaves its pieces to the rest.
// device_ms[w]: GPU w's time.
MatchList match_indexed_dealt(const IndexPlan& plan, int threshold, const std::vector<int>& devices,
                              Share share, std::vector<double>& device_ms, std::size_t pair_budget = 0);


// What match_shared's GPU workers share, made ahead (simkit/dedup.hpp, plan_gpu_match):
// the index's plan (null where it cannot be built) of the `count` signatures at `data`.
struct GpuPlan {
  std::shared_ptr<const IndexPlan> index;
  const ctph::Prepared* data = nullptr;
  std::size_t count = 0;
  std::size_t memory_budget = 0;  // the device bytes the index and its candidates may take (0: as they find)
  // The room gpu_index_room last found (on the first GPU): match_shared then decides as
  // its caller did, not on a second reading of the free memory.
  mutable std::optional<GpuIndexRoom> room_found;
};

// The plan's codes page-locked, once a process (what the first GPU worker does otherwise),
// through GPU `device`'s context, made here if the driver has not made it yet, which it
// leaves current. Throws Failure where the device cannot be used.
void lock_codes(const IndexPlan& plan, int device);

// Whether the index of these signatures fits half this process's share of device
// `device`'s free memory (the ranks of a host on one GPU share it): their keys counted,
// before any plan is made.
bool index_fits_gpu(const std::vector<ctph::Prepared>& signatures, int device);
// The same for signatures planned (their keys counted by the plan), or within `budget`
// bytes where it is not 0.
bool index_fits_gpu(const IndexPlan& plan, int device, std::size_t budget = 0);
// The index's device bytes, and what it may take on `device`: `budget` where it is not 0,
// else half this process's share of the free memory.
std::pair<std::size_t, std::size_t> index_room(const IndexPlan& plan, int device, std::size_t budget = 0);
// The candidate pairs a chunk may hold in what the index leaves of `budget` bytes (at
// least 1: a row's candidates are always taken whole).
std::size_t pair_budget_within(const IndexPlan& plan, std::size_t budget);

// Every pair of compatible block sizes scored (no index): the fallback. With `share`, the
// worker's share of each block-size group's rows. The matches a launch leaves on the
// device stay within what `memory_budget` leaves after the signatures (0: half this
// process's share of the free memory), and at least 3 MiB: a group's rows are taken in
// slices where they would not, down to a 64-row tile, whose matches are taken whole.
MatchList match_every_pair_gpu(const std::vector<ctph::Prepared>& signatures, int threshold, int device,
                               double* device_ms, Share share, std::size_t memory_budget = 0);

// This process's part of the current device's free memory: the ranks of a host that share
// one GPU share it.
std::size_t device_memory_share();

}  // namespace simkit::dedup
