// Counts of 64-bit keys (the corpus's window triples) gathered batch by batch in bounded
// memory. Each batch is sorted and counted into a run of (key, count) pairs; runs of like
// size merge as they come (so the work stays n log n); when the runs held outgrow the
// budget they are merged into one sorted file in the temporary folder ($TMPDIR, else
// /tmp), a spill; the end merges every spill and run. The counts are exact whatever the
// budget: a small budget costs disk traffic, not answers. Keys may be split into
// partitions by ranges (a word's triples each): partitions sort, merge and (when nothing
// was spilled) come out in parallel, so that no step runs on one core alone.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace simkit::disco {

class KeyCounts {
 public:
  // budget_bytes: memory for the runs held (16 bytes a distinct key). bounds: the first
  // key of partitions 1..P-1, ascending (none: one partition). fold (R weights): the keys
  // that add() counts are folded, key k with low 32 bits l counted as k - l % R with
  // weight fold[l % R] (none: each key itself, weight 1); add_counted's runs are taken as
  // they are.
  explicit KeyCounts(std::size_t budget_bytes, std::vector<std::uint64_t> bounds = {},
                     std::vector<std::uint64_t> fold = {});
  ~KeyCounts();
  KeyCounts(const KeyCounts&) = delete;
  KeyCounts& operator=(const KeyCounts&) = delete;

  // Counts `keys` (sorted in place, then cleared).
  void add(std::vector<std::uint64_t>& keys);
  // Counts every batch (each sorted in place by its own thread, then cleared).
  void add(std::span<std::vector<std::uint64_t>*> batches);
  // Counts a run already counted elsewhere (another rank's): distinct keys ascending,
  // each with its count.
  void add_counted(std::vector<std::pair<std::uint64_t, std::uint64_t>> run);
  // The same, already cut at the bounds: parts[p] holds partition p's keys (P runs).
  void add_counted_parts(std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> parts);
  // Every distinct key with its count, keys ascending. Call once, after the last add().
  void for_each(const std::function<void(std::uint64_t key, std::uint64_t count)>& body);
  // Partition p's keys ascending with their counts, when nothing was spilled (spills() ==
  // 0); calls for different partitions may run in parallel. After the last add().
  void for_each_in(std::size_t partition, const std::function<void(std::uint64_t key, std::uint64_t count)>& body);
  std::size_t spills() const noexcept { return spills_.size(); }
  std::size_t partitions() const noexcept { return runs_.size(); }

 private:
  using Run = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  // Adds one sorted, counted run to each partition (parts[p]; empty ones skipped).
  void push(std::vector<Run> parts);
  void spill();
  std::size_t budget_;
  std::vector<std::uint64_t> bounds_;
  std::vector<std::uint64_t> fold_;
  std::vector<std::vector<Run>> runs_;  // a partition's runs
  std::size_t held_ = 0;  // pairs in runs_
  struct File;
  std::vector<std::unique_ptr<File>> spills_;
};

}  // namespace simkit::disco
