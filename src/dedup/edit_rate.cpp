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

// More would let most pairs of ordinary signatures through.
constexpr std::uint32_t kMaxGuaranteedEdits = 16;

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

// The candidate rule for a pair of documents' signatures: a signature edit rate below
// rate * candidate_factor (the thesis's filter), or a signature distance that
// guaranteed_edits edits could cause (kSignatureCharsPerEdit each), capped by the edits the
// pair's lengths allow below the rate. The second part is what makes pairs within
// guaranteed_edits edits certain to be found: their signatures at a shared block size are
// at most kSignatureCharsPerEdit * edits apart, however short they are.
struct CandidateRule {
  const RateOptions& options;
  PairRule signatures() const {
    return {options.rate * options.candidate_factor, options.guaranteed_edits * ctph::kSignatureCharsPerEdit};
  }
  bool keeps(const EditPair& p, std::size_t sig_a, std::size_t sig_b, const Document& a, const Document& b) const {
    if (below_rate(p.distance, sig_a, sig_b, options.rate * options.candidate_factor)) return true;
    const std::optional<std::uint32_t> edits = largest_distance_below(options.rate, a.length + b.length);
    return edits && p.distance <= std::min<std::uint64_t>(*edits, options.guaranteed_edits) * ctph::kSignatureCharsPerEdit;
  }
};

// Whether a document's signature is too long for the signature kernels: only
// pathologically repetitive text has that many pieces at its length's block size.
bool unsignable(const Document& doc) { return doc.signature.text.size() > kMaxPairString; }

// Signature pairs that the rule keeps, as document pairs (the x document first, so that a
// row's pairs stay together): each group of equal block size with itself, and each
// group's doubled signatures with the group of twice its block size.
std::vector<std::pair<std::uint32_t, std::uint32_t>> signature_candidates(const std::vector<Document>& docs,
                                                                          const std::vector<std::uint32_t>& signable,
                                                                          const RateOptions& options,
                                                                          double* device_ms) {
  std::vector<std::uint64_t> sizes(signable.size());
  for (std::size_t i = 0; i < signable.size(); ++i) sizes[i] = docs[signable[i]].signature.block_size;
  const CompatibleGroups groups(sizes);
  const auto doc_at = [&](std::uint32_t k) { return signable[groups.order()[k]]; };
  const CandidateRule rule{options};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const CompatibleGroups::Meeting& meeting : groups.meetings()) {
    const auto& gx = groups.groups()[meeting.x];
    const auto& gy = groups.groups()[meeting.y];
    StringSet xs, ys;
    for (std::uint32_t k = gx.begin; k < gx.end; ++k) {
      const ctph::RateSignature& s = docs[doc_at(k)].signature;
      xs.add(meeting.same() ? s.text : s.doubled);
    }
    if (!meeting.same())
      for (std::uint32_t k = gy.begin; k < gy.end; ++k) ys.add(docs[doc_at(k)].signature.text);
    const StringSet& other = meeting.same() ? xs : ys;
    double ms = 0;
    const std::vector<EditPair> pairs =
        options.device >= 0
            ? edit_pairs_gpu(xs, other, meeting.same(), rule.signatures(), options.kernel, options.device, &ms)
            : edit_pairs_cpu(xs, other, meeting.same(), rule.signatures());
    if (device_ms != nullptr) *device_ms += ms;
    for (const EditPair& p : pairs) {
      const std::uint32_t a = doc_at(gx.begin + p.a), b = doc_at(gy.begin + p.b);
      if (rule.keeps(p, xs[p.a].size(), other[p.b].size(), docs[a], docs[b])) out.emplace_back(a, b);
    }
  }
  return out;
}

// Every pair of an unsignable document with any other whose length allows the rate.
std::vector<std::pair<std::uint32_t, std::uint32_t>> unsignable_candidates(const std::vector<Document>& docs,
                                                                           const std::vector<std::uint32_t>& unsigned_docs,
                                                                           double rate) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  if (unsigned_docs.empty()) return out;
  std::vector<std::uint32_t> by_length(docs.size());
  for (std::uint32_t i = 0; i < by_length.size(); ++i) by_length[i] = i;
  std::stable_sort(by_length.begin(), by_length.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return docs[a].length < docs[b].length; });
  for (const std::uint32_t e : unsigned_docs) {
    const std::uint64_t le = docs[e].length;
    // |le - l| < rate * (le + l) holds only for l > le * (1 - rate) / (1 + rate).
    const auto shortest = static_cast<std::uint64_t>(static_cast<double>(le) * (1 - rate) / (1 + rate));
    auto it = std::lower_bound(by_length.begin(), by_length.end(), shortest,
                               [&](std::uint32_t i, std::uint64_t l) { return docs[i].length < l; });
    for (; it != by_length.end(); ++it) {
      const std::uint32_t j = *it;
      const std::uint64_t lj = docs[j].length;
      const std::uint64_t gap = lj > le ? lj - le : le - lj;
      if (lj > le && !below_rate(static_cast<std::uint32_t>(std::min<std::uint64_t>(gap, UINT32_MAX)), le, lj, rate))
        break;  // longer ones only widen the gap
      if (j == e || (unsignable(docs[j]) && j < e)) continue;  // each pair of two unsignable documents once
      out.emplace_back(e, j);
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
  if (options.guaranteed_edits > kMaxGuaranteedEdits)
    throw UsageError("the guaranteed edits must be 0.." + std::to_string(kMaxGuaranteedEdits));
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
  std::vector<std::uint32_t> signable, unsigned_docs;
  for (std::uint32_t i = 0; i < docs.size(); ++i) (unsignable(docs[i]) ? unsigned_docs : signable).push_back(i);
  s.unsigned_documents = unsigned_docs.size();
  auto pairs = signature_candidates(docs, signable, options, &s.device_ms);
  const auto more = unsignable_candidates(docs, unsigned_docs, options.rate);
  pairs.insert(pairs.end(), more.begin(), more.end());
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
