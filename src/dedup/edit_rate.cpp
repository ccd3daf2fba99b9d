// The thesis's edit-rate pipeline (see match_rates in simkit/dedup.hpp): rate signatures,
// all signature pairs below the widened rate (CPU or GPU), exact verification.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_group.h>

#include "dedup/compatible.hpp"
#include "dedup/edit_distance.hpp"
#include "dedup/file_bytes.hpp"
#include "simkit/cluster.hpp"
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

using DocPairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// Signature pairs that the rule keeps, as document pairs (the x document first), of one
// worker: its share of each group's rows (every worker meets every group), on the CPU or
// GPU `device`. Each group of equal block size meets itself, and its doubled signatures
// meet the group of twice its block size.
DocPairs signature_candidates(const std::vector<Document>& docs, const std::vector<std::uint32_t>& signable,
                              const RateOptions& options, int device, Share share, double* device_ms) {
  std::vector<std::uint64_t> sizes(signable.size());
  for (std::size_t i = 0; i < signable.size(); ++i) sizes[i] = docs[signable[i]].signature.block_size;
  const CompatibleGroups groups(sizes);
  const auto doc_at = [&](std::uint32_t k) { return signable[groups.order()[k]]; };
  const CandidateRule rule{options};
  DocPairs out;
  // Strings of group positions [begin, end): texts, or the doubled signatures.
  const auto strings = [&](std::uint32_t begin, std::uint32_t end, bool doubled) {
    StringSet set;
    for (std::uint32_t k = begin; k < end; ++k) {
      const ctph::RateSignature& s = docs[doc_at(k)].signature;
      set.add(doubled ? s.doubled : s.text);
    }
    return set;
  };
  // The pairs of xs (group positions from x0) and ys (from y0) the rule keeps.
  const auto meet = [&](const StringSet& xs, std::uint32_t x0, const StringSet& ys, std::uint32_t y0, bool triangle) {
    double ms = 0;
    const std::vector<EditPair> pairs =
        device >= 0 ? edit_pairs_gpu(xs, ys, triangle, rule.signatures(), options.kernel, device, &ms)
                    : edit_pairs_cpu(xs, ys, triangle, rule.signatures());
    if (device_ms != nullptr) *device_ms += ms;
    for (const EditPair& p : pairs) {
      const std::uint32_t a = doc_at(x0 + p.a), b = doc_at(y0 + p.b);
      if (rule.keeps(p, xs[p.a].size(), ys[p.b].size(), docs[a], docs[b])) out.emplace_back(a, b);
    }
  };
  for (const CompatibleGroups::Meeting& meeting : groups.meetings()) {
    const auto& gx = groups.groups()[meeting.x];
    const auto& gy = groups.groups()[meeting.y];
    const RowRange mine = share_rows(gx.end - gx.begin, meeting.same(), share);
    const auto lo = gx.begin + static_cast<std::uint32_t>(mine.begin), hi = gx.begin + static_cast<std::uint32_t>(mine.end);
    if (lo == hi) continue;
    const StringSet xs = strings(lo, hi, !meeting.same());
    if (meeting.same()) {
      // Rows [lo, hi) with every later row of the group: among themselves, then with the rest.
      meet(xs, lo, xs, lo, true);
      if (hi < gx.end) meet(xs, lo, strings(hi, gx.end, false), hi, false);
    } else {
      meet(xs, lo, strings(gy.begin, gy.end, false), gy.begin, false);
    }
  }
  return out;
}

// Every pair of an unsignable document (of this worker's share of them) with any other
// whose length allows the rate.
DocPairs unsignable_candidates(const std::vector<Document>& docs, const std::vector<std::uint32_t>& unsigned_docs,
                               double rate, Share share) {
  DocPairs out;
  const RowRange mine = share_rows(unsigned_docs.size(), false, share);
  if (mine.size() == 0) return out;
  std::vector<std::uint32_t> by_length(docs.size());
  for (std::uint32_t i = 0; i < by_length.size(); ++i) by_length[i] = i;
  std::stable_sort(by_length.begin(), by_length.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return docs[a].length < docs[b].length; });
  for (std::size_t u = mine.begin; u < mine.end; ++u) {
    const std::uint32_t e = unsigned_docs[u];
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

// Every rank's signatures and lengths (rows [mine) of docs are this rank's) to every rank.
void share_signatures(std::vector<Document>& docs, RowRange mine) {
  std::string packed;
  const auto put = [&](const void* data, std::size_t n) { packed.append(static_cast<const char*>(data), n); };
  const auto put_text = [&](const std::string& t) {
    const std::uint64_t n = t.size();
    put(&n, sizeof n);
    packed += t;
  };
  for (std::size_t i = mine.begin; i < mine.end; ++i) {
    put(&docs[i].signature.block_size, sizeof(std::uint64_t));
    put(&docs[i].length, sizeof(std::uint64_t));
    put_text(docs[i].signature.text);
    put_text(docs[i].signature.doubled);
  }
  const std::vector<std::string> parts = cluster::gather(packed);
  std::string all;
  for (const std::string& part : parts) all += part;
  all = cluster::broadcast(std::move(all));
  std::size_t at = 0;
  const auto get = [&](void* data, std::size_t n) {
    std::memcpy(data, all.data() + at, n);
    at += n;
  };
  const auto get_text = [&](std::string& t) {
    std::uint64_t n = 0;
    get(&n, sizeof n);
    t.assign(all.data() + at, n);
    at += n;
  };
  for (std::size_t i = 0; i < docs.size(); ++i) {  // the shares come in rank order: every document once
    get(&docs[i].signature.block_size, sizeof(std::uint64_t));
    get(&docs[i].length, sizeof(std::uint64_t));
    get_text(docs[i].signature.text);
    get_text(docs[i].signature.doubled);
  }
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
  // Under mpirun each rank reads and signs its share of the files, then every rank gets
  // every signature; a rank keeps only its own share's bytes.
  const RowRange mine = share_rows(files.size(), false, static_cast<std::size_t>(cluster::rank()),
                                   static_cast<std::size_t>(cluster::size()));
  tbb::parallel_for(mine.begin, mine.end, [&](std::size_t i) {
    const auto bytes = readers.local().load(files[i]);
    docs[i].signature = ctph::rate_signature(bytes, options.signature_length);
    docs[i].length = bytes.size();
    if (kept_bytes.fetch_add(bytes.size()) + bytes.size() <= keep_budget)
      docs[i].kept.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    else
      kept_bytes.fetch_sub(bytes.size());
    if (progress != nullptr) progress->advance(1);
  });
  if (cluster::size() > 1) share_signatures(docs, mine);
  s.signature_seconds = seconds_since(start);

  start = Clock::now();
  std::vector<std::uint32_t> signable, unsigned_docs;
  for (std::uint32_t i = 0; i < docs.size(); ++i) (unsignable(docs[i]) ? unsigned_docs : signable).push_back(i);
  s.unsigned_documents = unsigned_docs.size();
  // The candidates: a worker a GPU (or the CPU) in each rank, each its share of every group.
  std::vector<int> gpus = options.devices;
  if (gpus.empty() && options.device >= 0) gpus.push_back(options.device);
  const cluster::Parts parts = cluster::parts(gpus.empty() ? 1 : gpus.size());
  std::vector<DocPairs> found(parts.local);
  std::vector<double> ms(parts.local, 0);
  run_workers(parts.local, [&](std::size_t w) {
    const Share share{parts.first + w, parts.total};
    found[w] = signature_candidates(docs, signable, options, gpus.empty() ? -1 : gpus[w], share, &ms[w]);
    const DocPairs more = unsignable_candidates(docs, unsigned_docs, options.rate, share);
    found[w].insert(found[w].end(), more.begin(), more.end());
  });
  s.device_ms = *std::max_element(ms.begin(), ms.end());
  DocPairs pairs;
  for (const DocPairs& part : found) pairs.insert(pairs.end(), part.begin(), part.end());
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
  if (cluster::size() > 1) {  // every rank's pairs on rank 0; the candidates of all ranks counted
    all = cluster::gather_values<RateMatch>(all);
    std::vector<std::uint64_t> count = {s.candidates};
    cluster::sum(count);
    s.candidates = count[0];
  }
  std::sort(all.begin(), all.end(), [](const RateMatch& p, const RateMatch& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; });
  s.verify_seconds = seconds_since(start);
  return all;
}

}  // namespace simkit::dedup
