// Key counts in bounded memory (key_counts.hpp): sorted runs, merged as they come and
// spilled to temporary files.
#include "disco/key_counts.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <span>
#include <utility>
#include <string>

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "simkit/error.hpp"

namespace simkit::disco {

namespace {

using Pair = std::pair<std::uint64_t, std::uint64_t>;
constexpr std::size_t kBuffer = 1 << 16;  // pairs read or written at a time

std::vector<Pair> merge(const std::vector<Pair>& a, const std::vector<Pair>& b) {
  std::vector<Pair> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].first < b[j].first) {
      out.push_back(a[i++]);
    } else if (b[j].first < a[i].first) {
      out.push_back(b[j++]);
    } else {
      out.emplace_back(a[i].first, a[i].second + b[j].second);
      ++i;
      ++j;
    }
  }
  out.insert(out.end(), a.begin() + static_cast<std::ptrdiff_t>(i), a.end());
  out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(j), b.end());
  return out;
}

// Sorts 64-bit keys: least significant digit first, 11 bits a pass, as many passes as the
// largest key has bits; a pass whose digit is the same in every key is skipped. The
// triple keys (w1 << 32 | feature, 40-50 bits) sort in 4-5 passes, 2.6x faster than
// std::sort (16M keys: 0.56 s against 1.45 s on one core of the development machine).
void radix_sort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& scratch) {
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  if (keys.size() < 2) return;
  std::uint64_t all = 0;
  for (const std::uint64_t k : keys) all |= k;
  const int passes = (64 - std::countl_zero(all) + kBits - 1) / kBits;
  std::vector<std::array<std::size_t, kBuckets>> counts(static_cast<std::size_t>(passes));
  for (auto& c : counts) c.fill(0);
  for (const std::uint64_t k : keys)
    for (int p = 0; p < passes; ++p) ++counts[static_cast<std::size_t>(p)][(k >> (p * kBits)) & (kBuckets - 1)];
  scratch.resize(keys.size());
  for (int p = 0; p < passes; ++p) {
    auto& count = counts[static_cast<std::size_t>(p)];
    if (std::find(count.begin(), count.end(), keys.size()) != count.end()) continue;  // one digit everywhere
    std::size_t sum = 0;
    for (std::size_t& c : count) sum += std::exchange(c, sum);
    for (const std::uint64_t k : keys) scratch[count[(k >> (p * kBits)) & (kBuckets - 1)]++] = k;
    keys.swap(scratch);
  }
}

// A sorted batch as (key, count) pairs; with fold (R weights), keys k whose low 32 bits
// are l folded to k - l % R and counted fold[l % R] each.
std::vector<Pair> count_sorted(std::span<const std::uint64_t> keys, const std::vector<std::uint64_t>& fold) {
  std::vector<Pair> run;
  if (fold.empty()) {
    for (std::size_t i = 0; i < keys.size();) {
      std::size_t j = i;
      while (j < keys.size() && keys[j] == keys[i]) ++j;
      run.emplace_back(keys[i], j - i);
      i = j;
    }
    return run;
  }
  const std::uint64_t r = fold.size();
  for (const std::uint64_t k : keys) {
    const std::uint64_t slot = (k & 0xFFFFFFFFu) % r, folded = k - slot, weight = fold[slot];
    if (!run.empty() && run.back().first == folded) run.back().second += weight;
    else run.emplace_back(folded, weight);
  }
  return run;
}

// Where each partition starts in `sorted` (ascending keys, or pairs by key): P + 1 places.
template <typename T, typename Key>
std::vector<std::size_t> partition_starts(const std::vector<T>& sorted, const std::vector<std::uint64_t>& bounds,
                                          Key key) {
  std::vector<std::size_t> starts{0};
  for (const std::uint64_t bound : bounds)
    starts.push_back(static_cast<std::size_t>(
        std::partition_point(sorted.begin() + static_cast<std::ptrdiff_t>(starts.back()), sorted.end(),
                             [&](const T& x) { return key(x) < bound; }) -
        sorted.begin()));
  starts.push_back(sorted.size());
  return starts;
}

// A source of sorted pairs for the k-way merge: a run in memory or a spill file.
struct Cursor {
  const std::vector<Pair>* run = nullptr;
  std::FILE* file = nullptr;
  std::vector<Pair> buffer;
  std::size_t at = 0, size = 0;
  bool next(Pair& out) {
    if (run != nullptr) {
      if (at == run->size()) return false;
      out = (*run)[at++];
      return true;
    }
    if (at == size) {
      buffer.resize(kBuffer);
      size = std::fread(buffer.data(), sizeof(Pair), kBuffer, file);
      at = 0;
      if (size == 0) {
        if (std::ferror(file) != 0) throw Failure("reading back the triple counts' temporary file failed");
        return false;
      }
    }
    out = buffer[at++];
    return true;
  }
};

// Merges the cursors' pairs in key order, summing equal keys, into `body`.
void merge_all(std::vector<Cursor>& cursors, const std::function<void(std::uint64_t, std::uint64_t)>& body) {
  using Head = std::pair<std::uint64_t, std::size_t>;  // key, cursor
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::vector<Pair> current(cursors.size());
  for (std::size_t c = 0; c < cursors.size(); ++c)
    if (cursors[c].next(current[c])) heads.emplace(current[c].first, c);
  while (!heads.empty()) {
    const std::uint64_t key = heads.top().first;
    std::uint64_t count = 0;
    while (!heads.empty() && heads.top().first == key) {
      const std::size_t c = heads.top().second;
      heads.pop();
      count += current[c].second;
      if (cursors[c].next(current[c])) heads.emplace(current[c].first, c);
    }
    body(key, count);
  }
}

}  // namespace

struct KeyCounts::File {
  std::FILE* stream = nullptr;
  ~File() {
    if (stream != nullptr) std::fclose(stream);
  }
};

KeyCounts::KeyCounts(std::size_t budget_bytes, std::vector<std::uint64_t> bounds, std::vector<std::uint64_t> fold)
    : budget_(std::max<std::size_t>(budget_bytes, 1 << 20)),
      bounds_(std::move(bounds)),
      fold_(std::move(fold)),
      runs_(bounds_.size() + 1) {}

KeyCounts::~KeyCounts() = default;

void KeyCounts::add(std::vector<std::uint64_t>& keys) {
  std::vector<std::uint64_t>* batch = &keys;
  add(std::span<std::vector<std::uint64_t>*>(&batch, 1));
}

void KeyCounts::add(std::span<std::vector<std::uint64_t>*> batches) {
  // Each batch sorted by its own thread and cut at the partitions' bounds; partition p
  // gets one run of each batch's slice.
  std::vector<std::vector<Run>> parts(batches.size());
  tbb::enumerable_thread_specific<std::vector<std::uint64_t>> scratch;
  tbb::parallel_for(std::size_t{0}, batches.size(), [&](std::size_t b) {
    std::vector<std::uint64_t>& keys = *batches[b];
    radix_sort(keys, scratch.local());
    const std::vector<std::size_t> starts = partition_starts(keys, bounds_, [](std::uint64_t k) { return k; });
    for (std::size_t p = 0; p < runs_.size(); ++p)
      parts[b].push_back(
          count_sorted(std::span<const std::uint64_t>(keys).subspan(starts[p], starts[p + 1] - starts[p]), fold_));
    keys.clear();
  });
  for (std::vector<Run>& part : parts) push(std::move(part));
}

void KeyCounts::add_counted(Run run) {
  const std::vector<std::size_t> starts = partition_starts(run, bounds_, [](const Pair& x) { return x.first; });
  std::vector<Run> parts(runs_.size());
  for (std::size_t p = 0; p < runs_.size(); ++p)
    parts[p].assign(run.begin() + static_cast<std::ptrdiff_t>(starts[p]), run.begin() + static_cast<std::ptrdiff_t>(starts[p + 1]));
  push(std::move(parts));
}

void KeyCounts::add_counted_parts(std::vector<Run> parts) {
  if (parts.size() != runs_.size()) throw Failure("internal: KeyCounts::add_counted_parts given the wrong partitions");
  push(std::move(parts));
}

void KeyCounts::push(std::vector<Run> parts) {
  std::vector<std::size_t> held(runs_.size());
  tbb::parallel_for(std::size_t{0}, runs_.size(), [&](std::size_t p) {
    std::vector<Run>& runs = runs_[p];
    if (!parts[p].empty()) runs.push_back(std::move(parts[p]));
    // Runs of like size merge, so each pair takes part in a logarithmic number of merges.
    while (runs.size() >= 2 && runs[runs.size() - 2].size() <= 2 * runs.back().size()) {
      Run merged = merge(runs[runs.size() - 2], runs.back());
      runs.pop_back();
      runs.back() = std::move(merged);
    }
    for (const Run& run : runs) held[p] += run.size();
  });
  held_ = 0;
  for (const std::size_t h : held) held_ += h;
  if (held_ * sizeof(Pair) > budget_) spill();
}

void KeyCounts::spill() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = fmt::format("{}/simkit-counts-XXXXXX", dir != nullptr && *dir != '\0' ? dir : "/tmp");
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw Failure(fmt::format("cannot create a temporary file for the triple counts ({}): {}", path, std::strerror(errno)));
  ::unlink(path.c_str());  // gone when closed
  auto file = std::make_unique<File>();
  file->stream = ::fdopen(fd, "w+b");
  if (file->stream == nullptr) {
    ::close(fd);
    throw Failure(fmt::format("cannot open a temporary file for the triple counts: {}", std::strerror(errno)));
  }
  std::vector<Cursor> cursors;
  for (const std::vector<Run>& runs : runs_)
    for (const Run& run : runs) cursors.push_back(Cursor{.run = &run});
  std::vector<Pair> out;
  out.reserve(kBuffer);
  const auto flush = [&] {
    if (std::fwrite(out.data(), sizeof(Pair), out.size(), file->stream) != out.size())
      throw Failure(fmt::format("writing the triple counts' temporary file failed: {} (set TMPDIR to a folder with room)",
                                std::strerror(errno)));
    out.clear();
  };
  merge_all(cursors, [&](std::uint64_t key, std::uint64_t count) {
    out.emplace_back(key, count);
    if (out.size() == kBuffer) flush();
  });
  flush();
  if (std::fflush(file->stream) != 0) throw Failure("writing the triple counts' temporary file failed");
  spills_.push_back(std::move(file));
  for (std::vector<Run>& runs : runs_) runs.clear();
  held_ = 0;
}

void KeyCounts::for_each(const std::function<void(std::uint64_t, std::uint64_t)>& body) {
  if (spills_.empty()) {  // the partitions' ranges follow each other
    for (std::size_t p = 0; p < runs_.size(); ++p) for_each_in(p, body);
    return;
  }
  std::vector<Cursor> cursors;
  for (const auto& file : spills_) {
    std::rewind(file->stream);
    cursors.push_back(Cursor{.file = file->stream});
  }
  for (const std::vector<Run>& runs : runs_)
    for (const Run& run : runs) cursors.push_back(Cursor{.run = &run});
  merge_all(cursors, body);
}

void KeyCounts::for_each_in(std::size_t partition, const std::function<void(std::uint64_t, std::uint64_t)>& body) {
  if (!spills_.empty()) throw Failure("internal: KeyCounts::for_each_in after a spill");
  const std::vector<Run>& runs = runs_.at(partition);
  if (runs.size() == 1) {
    for (const auto& [key, count] : runs[0]) body(key, count);
    return;
  }
  std::vector<Cursor> cursors;
  for (const Run& run : runs) cursors.push_back(Cursor{.run = &run});
  merge_all(cursors, body);
}

}  // namespace simkit::disco
