// The thesis's edit-rate pipeline (see match_rates in simkit/dedup.hpp): rate signatures,
// all signature pairs below the widened rate (CPU or GPU), exact verification.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_group.h>

#include "dedup/compatible.hpp"
#include "dedup/edit_distance.hpp"
#include "dedup/file_bytes.hpp"
#include "simkit/error.hpp"
#include "simkit/progress.hpp"

namespace simkit::dedup {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr std::uint64_t kLongPair = std::uint64_t{1} << 16;  // bytes of both documents

constexpr std::size_t kDefaultKeptBytes = std::size_t{1} << 30;

struct Document {
  ctph::RateSignature signature;
  std::uint64_t length = 0;
  std::string kept;  // the bytes, when they fit the budget
};

// A document's bytes: kept ones, or read again through `reader`.
std::string_view text_of(const Document& doc, const std::string& file, FileBytes& reader) {
  if (doc.length == 0 || !doc.kept.empty()) return doc.kept;
  const auto bytes = reader.load(file);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The largest distance that is still below the rate for lengths summing to `total`.
std::optional<std::uint32_t> largest_distance_below(double rate, std::uint64_t total) {
  double bound = std::ceil(rate * static_cast<double>(total));
  if (bound > static_cast<double>(UINT32_MAX)) bound = UINT32_MAX;
  for (auto d = static_cast<std::int64_t>(bound); d >= 0; --d)
    if (below_rate(static_cast<std::uint32_t>(d), total, 0, rate)) return static_cast<std::uint32_t>(d);
  return std::nullopt;
}

// Signature pairs below the candidate rate, as document pairs (the x document first, so
// that a row's pairs stay together): each group with itself, and each group's doubled
// signatures with the group of twice its block size.
std::vector<std::pair<std::uint32_t, std::uint32_t>> candidates(const std::vector<Document>& docs,
                                                                const RateOptions& options, double* device_ms) {
  std::vector<std::uint64_t> sizes(docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) sizes[i] = docs[i].signature.block_size;
  const CompatibleGroups groups(sizes);
  const double rate = options.rate * options.candidate_factor;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const CompatibleGroups::Meeting& meeting : groups.meetings()) {
    const auto& gx = groups.groups()[meeting.x];
    const auto& gy = groups.groups()[meeting.y];
    StringSet xs, ys;
    for (std::uint32_t k = gx.begin; k < gx.end; ++k) {
      const ctph::RateSignature& s = docs[groups.order()[k]].signature;
      xs.add(meeting.same() ? s.text : s.doubled);
    }
    if (!meeting.same())
      for (std::uint32_t k = gy.begin; k < gy.end; ++k) ys.add(docs[groups.order()[k]].signature.text);
    const StringSet& other = meeting.same() ? xs : ys;
    double ms = 0;
    const std::vector<EditPair> pairs =
        options.device >= 0 ? edit_pairs_gpu(xs, other, meeting.same(), rate, options.kernel, options.device, &ms)
                            : edit_pairs_cpu(xs, other, meeting.same(), rate);
    if (device_ms != nullptr) *device_ms += ms;
    for (const EditPair& p : pairs) {
      const std::uint32_t a = groups.order()[gx.begin + p.a], b = groups.order()[gy.begin + p.b];
      out.emplace_back(a, b);
    }
  }
  return out;
}

}  // namespace

std::vector<RateMatch> match_rates(const std::vector<std::string>& files, const RateOptions& options,
                                   RateStats* stats, Progress* progress) {
  if (!(options.rate > 0 && options.rate <= 1)) throw UsageError("the edit rate must be in (0, 1]");
  if (options.signature_length < 1 || options.signature_length > kMaxPairString)
    throw UsageError("the signature length must be 1.." + std::to_string(kMaxPairString));
  if (!(options.candidate_factor >= 1)) throw UsageError("the candidate factor must be at least 1");
  RateStats local;
  RateStats& s = stats != nullptr ? *stats : local;

  auto start = Clock::now();
  std::vector<Document> docs(files.size());
  // Documents are kept in memory while they fit the budget: verification then reads no
  // file a second time (opening one costs more than comparing a small pair).
  const std::size_t keep_budget = options.memory_budget != 0 ? options.memory_budget : kDefaultKeptBytes;
  std::atomic<std::size_t> kept_bytes{0};
  tbb::enumerable_thread_specific<FileBytes> readers;
  tbb::parallel_for(std::size_t{0}, files.size(), [&](std::size_t i) {
    const auto bytes = readers.local().load(files[i]);
    docs[i].signature = ctph::rate_signature(bytes, options.signature_length);
    docs[i].length = bytes.size();
    if (kept_bytes.fetch_add(bytes.size()) + bytes.size() <= keep_budget)
      docs[i].kept.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    else
      kept_bytes.fetch_sub(bytes.size());
    if (progress != nullptr) progress->advance(1);
  });
  s.signature_seconds = seconds_since(start);

  start = Clock::now();
  auto pairs = candidates(docs, options, &s.device_ms);
  // An edit distance is at least the difference of the lengths: pairs too unequal in
  // length cannot pass, whatever their signatures say.
  std::erase_if(pairs, [&](const auto& p) {
    const std::uint64_t la = docs[p.first].length, lb = docs[p.second].length;
    return !below_rate(static_cast<std::uint32_t>(std::min<std::uint64_t>(la > lb ? la - lb : lb - la, UINT32_MAX)),
                       la, lb, options.rate);
  });
  // Long pairs first, longest first: one started last would leave every other core idle.
  // The rest keep their rows together, whose first document each thread reads once.
  const auto bytes_of = [&](const auto& p) { return docs[p.first].length + docs[p.second].length; };
  const auto long_end = std::stable_partition(pairs.begin(), pairs.end(), [&](const auto& p) { return bytes_of(p) >= kLongPair; });
  std::sort(pairs.begin(), long_end, [&](const auto& p, const auto& q) { return bytes_of(p) > bytes_of(q); });
  s.candidates = pairs.size();
  s.candidate_seconds = seconds_since(start);

  start = Clock::now();
  struct Readers {
    FileBytes a, b;
    std::vector<RateMatch> found;
  };
  tbb::enumerable_thread_specific<Readers> verifiers;
  const auto verify = [&](std::size_t k) {
    const auto [i, j] = pairs[k];
    Readers& r = verifiers.local();
    const std::uint64_t total = docs[i].length + docs[j].length;
    const std::optional<std::uint32_t> limit = largest_distance_below(options.rate, total);
    if (!limit) return;
    const std::string_view ta = text_of(docs[i], files[i], r.a), tb = text_of(docs[j], files[j], r.b);
    if (const auto d = edit_distance_within(ta, tb, *limit))
      r.found.push_back(RateMatch{std::min(i, j), std::max(i, j), *d,
                                  total == 0 ? 0.0 : static_cast<double>(*d) / static_cast<double>(total)});
  };
  // Long pairs one a task (a range of them run by one thread would serialise the longest),
  // beside the rest in ranges (whose rows share their first document).
  const auto long_count = static_cast<std::size_t>(long_end - pairs.begin());
  const auto verify_range = [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t k = range.begin(); k != range.end(); ++k) verify(k);
  };
  tbb::task_group group;
  group.run([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, long_count, 1), verify_range, tbb::simple_partitioner());
  });
  group.run_and_wait([&] { tbb::parallel_for(tbb::blocked_range<std::size_t>(long_count, pairs.size()), verify_range); });
  std::vector<RateMatch> all;
  for (auto& v : verifiers) all.insert(all.end(), v.found.begin(), v.found.end());
  std::sort(all.begin(), all.end(), [](const RateMatch& p, const RateMatch& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; });
  s.verify_seconds = seconds_since(start);
  return all;
}

}  // namespace simkit::dedup
