// Counts of 64-bit keys (the corpus's window triples) gathered batch by batch in bounded
// memory. Each batch is sorted and counted into a run of (key, count) pairs; runs of like
// size merge as they come (so the work stays n log n); when the runs held outgrow the
// budget they are merged into one sorted file in the temporary folder ($TMPDIR, else
// /tmp), a spill; the end merges every spill and run. The counts are exact whatever the
// budget: a small budget costs disk traffic, not answers.
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
  // budget_bytes: memory for the runs held (16 bytes a distinct key).
  explicit KeyCounts(std::size_t budget_bytes);
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
  // Every distinct key with its count, keys ascending. Call once, after the last add().
  void for_each(const std::function<void(std::uint64_t key, std::uint64_t count)>& body);
  std::size_t spills() const noexcept { return spills_.size(); }

 private:
  using Run = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  void push(Run run);
  void spill();
  std::size_t budget_;
  std::vector<Run> runs_;
  std::size_t held_ = 0;  // pairs in runs_
  struct File;
  std::vector<std::unique_ptr<File>> spills_;
};

}  // namespace simkit::disco
