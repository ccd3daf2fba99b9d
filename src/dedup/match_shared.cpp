// ssdeep-mode matching shared out among the run's workers (match_shared in
// simkit/dedup.hpp): each takes its share of the rows, the pairs come together on rank 0.
#include <algorithm>
#include <cstdint>
#include <span>
#include <tuple>

#include <oneapi/tbb/parallel_for.h>

#include "core/phase_clock.hpp"
#include "core/prefault.hpp"
#include "dedup/match_gpu.hpp"
#include "dedup/sorted_runs.hpp"
#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/device.hpp"
#include "simkit/threads.hpp"

namespace simkit::dedup {

namespace {

// Sorted parts merged into `to`: pairwise, round after round, through buffers of their
// own (streaming merges, where a heap of eight parts cost four times as much).
void merge_parts(std::vector<std::span<const Match>> parts, Match* to) {
  std::size_t total = 0;
  for (const auto& part : parts) total += part.size();
  MatchList buffers[2];
  for (int round = 0; parts.size() > 1; ++round) {
    const bool last = parts.size() == 2;
    Match* out = to;
    if (!last) {
      buffers[round % 2].resize(total);
      out = buffers[round % 2].data();
    }
    std::vector<std::span<const Match>> merged;
    for (std::size_t i = 0; i < parts.size(); i += 2) {
      const std::span<const Match> x = parts[i], y = i + 1 < parts.size() ? parts[i + 1] : std::span<const Match>();
      std::merge(x.begin(), x.end(), y.begin(), y.end(), out, by_pair);  // (a part alone: copied)
      merged.emplace_back(out, x.size() + y.size());
      out += x.size() + y.size();
    }
    parts = std::move(merged);
  }
  if (parts.size() == 1 && parts[0].data() != to) std::copy(parts[0].begin(), parts[0].end(), to);
}

// The runs merged into out on all cores: cut into pieces at splitters sampled from every
// run (every run cut where each splitter would go, the splitters in order, so the cuts
// tile every run), each piece merged from its part of every run.
void merge_runs(const std::vector<std::span<const Match>>& runs, Match* out) {
  std::size_t total = 0;
  for (const auto& run : runs) total += run.size();
  const std::size_t pieces = std::clamp<std::size_t>(total / (1 << 16), 1, 4 * max_threads());
  MatchList samples;  // about eight a piece, from each run by its size
  for (const auto& run : runs) {
    const std::size_t take = (8 * pieces * run.size() + total - 1) / total;
    for (std::size_t j = 0; j < take; ++j) samples.push_back(run[run.size() * j / take]);
  }
  std::sort(samples.begin(), samples.end(), by_pair);
  // cut[piece][r]: where piece `piece` begins in run r (pieces + 1 rows, the last the ends).
  std::vector<std::vector<std::size_t>> cut(pieces + 1, std::vector<std::size_t>(runs.size(), 0));
  for (std::size_t r = 0; r < runs.size(); ++r) cut[pieces][r] = runs[r].size();
  tbb::parallel_for(std::size_t{1}, pieces, [&](std::size_t piece) {
    const Match& splitter = samples[samples.size() * piece / pieces];
    for (std::size_t r = 0; r < runs.size(); ++r)
      cut[piece][r] = static_cast<std::size_t>(
          std::lower_bound(runs[r].begin(), runs[r].end(), splitter, by_pair) - runs[r].begin());
  });
  tbb::parallel_for(std::size_t{0}, pieces, [&](std::size_t piece) {
    std::size_t at = 0;
    std::vector<std::span<const Match>> parts;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      at += cut[piece][r];
      if (cut[piece + 1][r] > cut[piece][r])
        parts.push_back(runs[r].subspan(cut[piece][r], cut[piece + 1][r] - cut[piece][r]));
    }
    merge_parts(std::move(parts), out + at);
  });
}

}  // namespace

std::vector<MatchList> flatten(std::vector<std::vector<MatchList>> runs) {
  std::vector<MatchList> all;
  for (auto& worker : runs)
    for (auto& run : worker) all.push_back(std::move(run));
  return all;
}

MatchList merge_sorted_runs(std::vector<MatchList> runs) {
  std::erase_if(runs, [](const MatchList& run) { return run.empty(); });
  if (runs.empty()) return {};
  if (runs.size() == 1) return std::move(runs[0]);
  std::vector<std::span<const Match>> spans(runs.begin(), runs.end());
  std::size_t total = 0;
  for (const auto& run : runs) total += run.size();
  MatchList all = faulted_in<MatchList>(total);
  merge_runs(spans, all.data());
  return all;
}

MatchList merge_sorted_runs(MatchList all, const std::vector<std::size_t>& ends) {
  std::vector<std::span<const Match>> spans;
  std::size_t begin = 0;
  for (const std::size_t end : ends) {
    if (end > begin) spans.emplace_back(all.data() + begin, end - begin);
    begin = std::max(begin, end);
  }
  if (spans.size() < 2) return all;
  MatchList merged = faulted_in<MatchList>(all.size());
  merge_runs(spans, merged.data());
  return merged;
}

std::shared_ptr<const GpuPlan> plan_gpu_match(const std::vector<ctph::Prepared>& signatures,
                                              std::size_t memory_budget) {
  if (!cuda_built()) return nullptr;
  return std::make_shared<const GpuPlan>(
      GpuPlan{plan_index(signatures), signatures.data(), signatures.size(), memory_budget});
}

GpuIndexRoom gpu_index_room(const GpuPlan& plan, int device) {
  GpuIndexRoom found;
  if (plan.index != nullptr) std::tie(found.bytes, found.room) = index_room(*plan.index, device, plan.memory_budget);
  plan.room_found = found;
  return found;
}

void page_lock_plan(const GpuPlan& plan, int device) {
  if (plan.index != nullptr) lock_codes(*plan.index, device);
}

MatchList match_shared(const std::vector<ctph::Prepared>& signatures, int threshold,
                       const std::vector<int>& devices, Progress* progress, double* device_ms,
                       std::shared_ptr<const GpuPlan> ahead) {
  const cluster::Parts parts = cluster::parts(devices.empty() ? 1 : devices.size());
  PhaseClock clock("dedup");
  std::vector<std::vector<MatchList>> found(parts.local);  // each worker's sorted runs
  std::vector<double> ms(parts.local, 0);
  // Every GPU worker takes the same path (the index, or every pair scored), or their
  // shares of the rows would not tile: the index where it can be built and fits the first
  // GPU (a worker whose GPU it does not fit leaves its rows to the others). Its host part
  // is made once, for all of this process's workers, or was made ahead. (The check waits
  // for the first GPU's start: a GPU the driver readies before it gains only as much.)
  const bool planned = ahead != nullptr && ahead->data == signatures.data() && ahead->count == signatures.size();
  std::shared_ptr<const IndexPlan> plan;
  const std::size_t budget = planned ? ahead->memory_budget : 0;
  if (!devices.empty() && planned) {  // (its keys counted already)
    // (As the caller found it, where it asked: gpu_index_room.)
    if (ahead->index != nullptr &&
        (ahead->room_found ? ahead->room_found->fits() : index_fits_gpu(*ahead->index, devices[0], budget)))
      plan = ahead->index;
  } else if (!devices.empty() && index_fits_gpu(signatures, devices[0])) {
    plan = plan_index(signatures);
  }
  ahead = nullptr;
  bool index = plan != nullptr;
  if (parts.total > 1 && !devices.empty()) index = cluster::min(index ? 1 : 0) == 1;
  if (!index) plan = nullptr;  // (every pair scored: the plan's memory back first)
  clock.mark("the index's plan");
  const std::size_t pair_budget = index && budget != 0 ? pair_budget_within(*plan, budget) : 0;  // (0: as they find)
  if (index && parts.local > 1) {
    // A process's GPUs take pieces of its rows as they ask for them, so that one the driver
    // readies first starts first; their matches come down as one run.
    found[0].push_back(
        match_indexed_dealt(*plan, threshold, devices, Share{parts.first, parts.total}, ms, pair_budget));
  } else {
    run_parts(parts.local, [&](std::size_t w) {
      const Share share{parts.first + w, parts.total};
      if (devices.empty()) found[w].push_back(match_all(signatures, threshold, progress, share));
      else if (index) found[w] = match_indexed_runs(*plan, threshold, devices[w], &ms[w], share, nullptr, pair_budget);
      else found[w].push_back(match_every_pair_gpu(signatures, threshold, devices[w], &ms[w], share, budget));
    });
  }
  plan = nullptr;
  clock.mark("the workers' matches");
  if (device_ms != nullptr) *device_ms = *std::max_element(ms.begin(), ms.end());
  // Each run is sorted (a pair is one run's): merged here, then across ranks.
  MatchList mine = merge_sorted_runs(flatten(std::move(found)));
  clock.mark("merged");
  if (cluster::size() == 1) return mine;
  // Received on rank 0 straight into one answer, its pages faulted in on all cores (a
  // gather by strings cost 0.5 s at a million hashes: copies into fresh memory a page
  // fault at a time), then merged.
  MatchList all;
  const std::vector<std::size_t> sizes = cluster::gather_into(
      {reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(Match)}, [&](std::size_t total) {
        all = faulted_in<MatchList>(total / sizeof(Match));
        return reinterpret_cast<char*>(all.data());
      });
  mine = {};
  std::vector<std::size_t> ends;
  for (const std::size_t size : sizes) ends.push_back((ends.empty() ? 0 : ends.back()) + size / sizeof(Match));
  all = merge_sorted_runs(std::move(all), ends);
  clock.mark("gathered and merged");
  return all;
}

}  // namespace simkit::dedup
