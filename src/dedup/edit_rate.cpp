// The thesis's edit-rate pipeline (see match_rates in simkit/dedup.hpp): rate signatures,
// all signature pairs below the widened rate (CPU or GPU), exact verification; and beside
// it the guarantee for pairs within a few edits: signatures at block sizes chosen by the
// documents' lengths, pairs within what those edits can change in them, verified up to
// that many edits.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <memory>
#include <numeric>
#include <tuple>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_group.h>

#include "dedup/compatible.hpp"
#include "dedup/edit_distance.hpp"
#include "dedup/file_bytes.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/progress.hpp"
#include "simkit/threads.hpp"

namespace simkit::dedup {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr std::uint64_t kLongPair = std::uint64_t{1} << 16;  // bytes of both documents

// A candidate's sort word (match_rates): its first document in the top 31 bits, its
// second in the next 32, whether it is not full in the last; so at most 2^31 documents.
constexpr std::uint64_t kDocumentMask = 0xffffffffu;
constexpr std::size_t kMaxDocuments = std::size_t{1} << 31;

constexpr std::size_t kDefaultKeptBytes = std::size_t{1} << 30;
// Characters of signatures scored by one call at most (RateOptions::pair_set_chars).
constexpr std::size_t kPairSetChars = std::size_t{1} << 30;

// More would let most pairs of ordinary signatures through.
constexpr std::uint32_t kMaxGuaranteedEdits = 16;

struct Document {
  ctph::RateSignature signature;  // the thesis's (ctph::rate_signature)
  ctph::RateSignature by_length;  // at the block size of its length (ctph::length_signature)
  std::uint64_t length = 0;
  std::string kept;  // the bytes, when they fit the budget
  std::string_view packed;  // the bytes once moved into the GPUs' texts (GpuWork)
};

// A document's bytes: packed for the GPUs, kept, or read again through `reader`.
std::string_view text_of(const Document& doc, const std::string& file, FileBytes& reader) {
  if (!doc.packed.empty()) return doc.packed;
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

// Whether a document's length-chosen signature is too long for the signature kernels:
// only pathologically repetitive text has that many pieces at its length's block size.
bool unsignable(const Document& doc) { return doc.by_length.text.size() > kMaxPairString; }

// A candidate pair of documents, verified up to the full distance its lengths allow below
// the rate (the thesis's filter found it) or only up to the guaranteed edits (the
// guarantee's filter alone did: what it promises is those pairs).
struct Candidate {
  std::uint32_t a = 0, b = 0;
  bool full = true;
};

using Candidates = std::vector<Candidate>;

// Which signature a filter reads, and which of its pairs it keeps.
struct Filter {
  ctph::RateSignature Document::*signature;
  PairRule rule;
  // The guarantee's filter: a pair's distance also within what its allowed edits can change.
  std::optional<std::uint32_t> guaranteed_edits;
};

// Signature pairs that the filter keeps, as document pairs (the x document first), of one
// worker: its share of each group's rows (every worker meets every group), on the CPU or
// GPU `device`. Each group of equal block size meets itself, and its doubled signatures
// meet the group of twice its block size.
Candidates signature_candidates(const std::vector<Document>& docs, const std::vector<std::uint32_t>& signable,
                                const RateOptions& options, const Filter& filter, int device, Share share,
                                double* device_ms, std::uint64_t& scored) {
  std::vector<std::uint64_t> sizes(signable.size());
  for (std::size_t i = 0; i < signable.size(); ++i) sizes[i] = (docs[signable[i]].*filter.signature).block_size;
  const CompatibleGroups groups(sizes);
  // Each group by the documents' lengths, so that the rows whose lengths allow the rate
  // with a row's are a window of the group (options.prune_by_length).
  std::vector<std::uint32_t> order = groups.order();
  const auto length_of = [&](std::uint32_t i) { return docs[signable[i]].length; };
  if (options.prune_by_length)
    for (const CompatibleGroups::Group& g : groups.groups())
      std::sort(order.begin() + g.begin, order.begin() + g.end, [&](std::uint32_t a, std::uint32_t b) {
        return length_of(a) != length_of(b) ? length_of(a) < length_of(b) : a < b;
      });
  const auto doc_at = [&](std::uint32_t k) { return signable[order[k]]; };
  // Group g's positions whose documents can be below the rate with a document of a length
  // in [shortest, longest] (a little wider, for rounding; the exact test comes later).
  const auto window = [&](const CompatibleGroups::Group& g, std::uint64_t shortest, std::uint64_t longest) {
    if (!options.prune_by_length || options.rate >= 1) return std::pair{g.begin, g.end};
    const double r = options.rate;
    const double low = std::floor(static_cast<double>(shortest) * (1 - r) / (1 + r)) - 1;
    const double high = std::ceil(static_cast<double>(longest) * (1 + r) / (1 - r)) + 1;
    const auto begin = std::partition_point(order.begin() + g.begin, order.begin() + g.end,
                                            [&](std::uint32_t i) { return static_cast<double>(length_of(i)) < low; });
    const auto end = std::partition_point(begin, order.begin() + g.end,
                                          [&](std::uint32_t i) { return static_cast<double>(length_of(i)) <= high; });
    return std::pair{static_cast<std::uint32_t>(begin - order.begin()), static_cast<std::uint32_t>(end - order.begin())};
  };
  // The blocks' strings in sets, each scored by one call: a group's signatures once, as one
  // range (base[g] its first), then the doubled signatures of the rows that meet a group
  // of twice their block size; `position` holds each string's group position. A set is
  // scored once the next meeting's strings would take it past options.pair_set_chars (the
  // kernels index a set's characters with 32 bits).
  const std::size_t set_chars = options.pair_set_chars != 0 ? options.pair_set_chars : kPairSetChars;
  constexpr std::uint32_t kAbsent = UINT32_MAX;
  const auto& all_groups = groups.groups();
  const auto text_of = [&](std::uint32_t k) -> const std::string& { return (docs[doc_at(k)].*filter.signature).text; };
  const auto doubled_of = [&](std::uint32_t k) -> const std::string& { return (docs[doc_at(k)].*filter.signature).doubled; };
  std::vector<std::size_t> group_chars(all_groups.size(), 0);
  for (std::size_t g = 0; g < all_groups.size(); ++g)
    for (std::uint32_t k = all_groups[g].begin; k < all_groups[g].end; ++k) group_chars[g] += text_of(k).size();
  Candidates out;
  StringSet strings;
  std::vector<std::uint32_t> position, base(all_groups.size(), kAbsent);
  std::vector<PairBlock> blocks;
  const auto score = [&] {
    for (const PairBlock& b : blocks) scored += b.pairs();
    double ms = 0;
    const std::vector<EditPair> pairs = device >= 0 ? edit_pairs_gpu(strings, blocks, filter.rule, options.kernel,
                                                                     device, &ms, PairOrder::as_found)
                                                    : edit_pairs_cpu(strings, blocks, filter.rule);
    if (device_ms != nullptr) *device_ms += ms;
    const std::size_t first = out.size();
    out.resize(first + pairs.size());
    tbb::parallel_for(std::size_t{0}, pairs.size(), [&](std::size_t i) {
      const EditPair& p = pairs[i];
      const std::uint32_t a = doc_at(position[p.a]), b = doc_at(position[p.b]);
      out[first + i] = {a, b, !filter.guaranteed_edits};
      if (filter.guaranteed_edits) {
        // Edits beyond what the lengths allow below the rate cannot make a true pair.
        const std::optional<std::uint32_t> edits = largest_distance_below(options.rate, docs[a].length + docs[b].length);
        if (!edits || p.distance > std::min(*edits, *filter.guaranteed_edits) * ctph::kSignatureCharsPerEdit)
          out[first + i].a = out[first + i].b = kAbsent;
      }
    });
    out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                             [&](const Candidate& c) { return c.a == kAbsent && c.b == kAbsent; }),
              out.end());
    strings = StringSet{};
    position.clear();
    base.assign(all_groups.size(), kAbsent);
    blocks.clear();
  };
  const auto place_group = [&](std::size_t g) {
    if (base[g] != kAbsent) return;
    base[g] = static_cast<std::uint32_t>(strings.size());
    for (std::uint32_t k = all_groups[g].begin; k < all_groups[g].end; ++k) {
      strings.add(text_of(k));
      position.push_back(k);
    }
  };
  // A worker's rows of a group in runs of consecutive lengths, each run meeting only its
  // window (bench/results/dedup.md: runs of 1,024 rows on a GPU, 64 on the CPU).
  const std::uint32_t run_rows = !options.prune_by_length ? UINT32_MAX
                                 : options.run_rows != 0  ? options.run_rows
                                 : device >= 0            ? 1024
                                                          : 64;
  for (const CompatibleGroups::Meeting& meeting : groups.meetings()) {
    const auto& gx = all_groups[meeting.x];
    const auto& gy = all_groups[meeting.y];
    const RowRange mine = share_rows(gx.end - gx.begin, meeting.same(), share);
    const auto lo = gx.begin + static_cast<std::uint32_t>(mine.begin), hi = gx.begin + static_cast<std::uint32_t>(mine.end);
    if (lo >= hi) continue;
    std::size_t more = base[meeting.y] == kAbsent ? group_chars[meeting.y] : 0;
    if (!meeting.same())
      for (std::uint32_t k = lo; k < hi; ++k) more += doubled_of(k).size();
    if (!blocks.empty() && strings.chars.size() + more > set_chars) score();
    place_group(meeting.y);
    const auto at_y = [&](std::uint32_t k) { return base[meeting.y] + (k - gy.begin); };
    for (std::uint32_t begin = lo; begin < hi;) {
      const std::uint32_t end = hi - begin > run_rows ? begin + run_rows : hi;
      const auto [y_begin, y_end] = window(gy, length_of(order[begin]), length_of(order[end - 1]));
      if (meeting.same()) {
        // Rows [begin, end) among themselves, then with the later rows of their window.
        blocks.push_back({at_y(begin), end - begin, at_y(begin), end - begin, true});
        const std::uint32_t later = std::max(end, y_begin);
        if (later < y_end) blocks.push_back({at_y(begin), end - begin, at_y(later), y_end - later, false});
      } else if (y_begin < y_end) {
        const auto x = static_cast<std::uint32_t>(strings.size());
        for (std::uint32_t k = begin; k < end; ++k) {
          strings.add(doubled_of(k));
          position.push_back(k);
        }
        blocks.push_back({x, end - begin, at_y(y_begin), y_end - y_begin, false});
      }
      begin = end;
    }
  }
  if (!blocks.empty()) score();
  return out;
}

// Every pair of an unsignable document (of this worker's share of them) with any other
// whose length allows the rate: for the guarantee, verified up to the guaranteed edits.
Candidates unsignable_candidates(const std::vector<Document>& docs, const std::vector<std::uint32_t>& unsigned_docs,
                                 double rate, Share share) {
  Candidates out;
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
      out.push_back({e, j, false});
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
    put(&docs[i].length, sizeof(std::uint64_t));
    for (const ctph::RateSignature* s : {&docs[i].signature, &docs[i].by_length}) {
      put(&s->block_size, sizeof(std::uint64_t));
      put_text(s->text);
      put_text(s->doubled);
    }
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
    get(&docs[i].length, sizeof(std::uint64_t));
    for (ctph::RateSignature* s : {&docs[i].signature, &docs[i].by_length}) {
      get(&s->block_size, sizeof(std::uint64_t));
      get_text(s->text);
      get_text(s->doubled);
    }
  }
}

// The pairs the GPUs verify, and their documents: sent to the GPUs already (`sent`, one
// a GPU, each holding every document in memory), or else end to end in `chars`.
struct GpuWork {
  std::vector<GpuTextsPtr> sent;
  std::unique_ptr<char[]> chars;
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint32_t> slot;  // a document's text, kBeyond for none
  // Pair indices, longest first (a long pair taken last would keep one warp busy while
  // the rest idle).
  std::vector<std::size_t> order;
};

// Every document in memory sent to each GPU, while the candidates are looked for (the
// GPUs' verification then starts at once). Null for a GPU whose memory they would crowd.
std::vector<GpuTextsPtr> send_documents(const std::vector<Document>& docs, const std::vector<int>& gpus) {
  std::vector<std::string_view> texts(docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) texts[i] = docs[i].kept;
  std::vector<GpuTextsPtr> sent;
  for (const int gpu : gpus) sent.push_back(send_texts_to_gpu(texts, gpu));
  return sent;
}

// pairs[k], k in `which` (documents in memory), made ready for the GPUs on all cores.
// Unless every GPU holds the documents already (`sent`), the documents' bytes move into
// the work's texts (Document::packed), so that memory holds them once, within the budget.
GpuWork gpu_work(std::vector<Document>& docs, const Candidates& pairs, const std::vector<std::size_t>& which,
                 std::vector<GpuTextsPtr> sent) {
  GpuWork work;
  if (!sent.empty() && std::ranges::all_of(sent, [](const GpuTextsPtr& texts) { return texts != nullptr; })) {
    work.sent = std::move(sent);
    work.slot.resize(docs.size());
    std::iota(work.slot.begin(), work.slot.end(), 0u);
  } else {
    work.slot.assign(docs.size(), kBeyond);
    std::vector<std::uint32_t> named;
    for (const std::size_t k : which)
      for (const std::uint32_t d : {pairs[k].a, pairs[k].b})
        if (work.slot[d] == kBeyond) {
          work.slot[d] = static_cast<std::uint32_t>(named.size());
          named.push_back(d);
          work.offsets.push_back(work.offsets.back() + docs[d].length);
        }
    work.chars.reset(new char[std::max<std::uint64_t>(work.offsets.back(), 1)]);
    tbb::parallel_for(std::size_t{0}, named.size(), [&](std::size_t i) {
      Document& doc = docs[named[i]];
      char* at = work.chars.get() + work.offsets[i];
      std::memcpy(at, doc.kept.data(), doc.length);
      doc.packed = std::string_view(at, doc.length);
      std::string().swap(doc.kept);
    });
  }
  std::vector<std::pair<std::uint64_t, std::size_t>> keys(which.size());  // (bytes, pair)
  tbb::parallel_for(std::size_t{0}, which.size(), [&](std::size_t u) {
    keys[u] = {docs[pairs[which[u]].a].length + docs[pairs[which[u]].b].length, which[u]};
  });
  tbb::parallel_sort(keys.begin(), keys.end(), [](const auto& p, const auto& q) {
    return p.first != q.first ? p.first > q.first : p.second < q.second;
  });
  work.order.resize(keys.size());
  for (std::size_t u = 0; u < keys.size(); ++u) work.order[u] = keys[u].second;
  return work;
}

// Verifies the work's pairs on the GPUs, shared out round robin: each pair's distance
// within its limit into distances[k] (a GPU a thread; no two write the same pair).
void verify_on_gpus(const GpuWork& work, const Candidates& pairs, const std::vector<std::optional<std::uint32_t>>& limits,
                    const std::vector<int>& gpus, double* device_ms, std::vector<std::optional<std::uint32_t>>& distances) {
  const std::size_t workers = gpus.size();
  std::vector<double> ms(workers, 0);
  run_parts(workers, [&](std::size_t w) {
    const std::size_t count = work.order.size() / workers + (w < work.order.size() % workers ? 1 : 0);
    std::vector<TextPair> text_pairs(count);
    tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
      const std::size_t k = work.order[w + i * workers];
      text_pairs[i] = {work.slot[pairs[k].a], work.slot[pairs[k].b], *limits[k]};
    });
    const std::vector<std::uint32_t> found =
        work.sent.empty() ? distances_within_gpu(work.chars.get(), work.offsets, text_pairs, gpus[w], &ms[w])
                          : distances_within_gpu(*work.sent[w], text_pairs, &ms[w]);
    tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
      if (found[i] != kBeyond) distances[work.order[w + i * workers]] = found[i];
    });
  });
  *device_ms += *std::max_element(ms.begin(), ms.end());
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
  if (files.size() > kMaxDocuments) throw UsageError("the edit-rate mode compares at most 2^31 documents");
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
    if (options.guaranteed_edits > 0)
      std::tie(docs[i].signature, docs[i].by_length) =
          ctph::rate_and_length_signatures(bytes, options.signature_length, options.signature_length);
    else
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
  std::vector<int> gpus = options.devices;
  if (gpus.empty() && options.device >= 0) gpus.push_back(options.device);
  if (options.devices_when_signed) gpus = options.devices_when_signed();
  s.device_wait_seconds = seconds_since(start);
  // The documents go to the GPUs while the candidates are looked for.
  std::future<std::vector<GpuTextsPtr>> sending;
  if (!gpus.empty()) sending = std::async(std::launch::async, [&] { return send_documents(docs, gpus); });

  start = Clock::now();
  // The thesis's filter over every document; the guarantee's over those its kernels take,
  // and the rest met by every document of a fitting length.
  std::vector<std::uint32_t> every(docs.size()), signable, unsigned_docs;
  std::iota(every.begin(), every.end(), 0u);
  if (options.guaranteed_edits > 0)
    for (std::uint32_t i = 0; i < docs.size(); ++i) (unsignable(docs[i]) ? unsigned_docs : signable).push_back(i);
  s.unsigned_documents = unsigned_docs.size();
  const Filter thesis{&Document::signature, PairRule{options.rate * options.candidate_factor, 0}, std::nullopt};
  const Filter guarantee{&Document::by_length, PairRule{0, options.guaranteed_edits * ctph::kSignatureCharsPerEdit},
                         options.guaranteed_edits};
  // The candidates: a worker a GPU (or the CPU) in each rank, each its share of every
  // group; each worker's two filters at once, a thread each (on a GPU, a stream each: one
  // filter's host work overlaps the other's kernels).
  const cluster::Parts parts = cluster::parts(gpus.empty() ? 1 : gpus.size());
  const std::size_t filters = options.guaranteed_edits > 0 ? 2 : 1;
  std::vector<Candidates> found(parts.local * filters);
  std::vector<double> ms(parts.local * filters, 0);
  std::vector<std::uint64_t> scored(parts.local * filters, 0);
  run_parts(parts.local * filters, [&](std::size_t part) {
    const std::size_t w = part / filters;
    const Share share{parts.first + w, parts.total};
    const int device = gpus.empty() ? -1 : gpus[w];
    if (part % filters == 0) {
      found[part] = signature_candidates(docs, every, options, thesis, device, share, &ms[part], scored[part]);
      return;
    }
    found[part] = signature_candidates(docs, signable, options, guarantee, device, share, &ms[part], scored[part]);
    const Candidates more = unsignable_candidates(docs, unsigned_docs, options.rate, share);
    found[part].insert(found[part].end(), more.begin(), more.end());
  });
  s.device_ms = 0;
  for (std::size_t w = 0; w < parts.local; ++w)
    s.device_ms = std::max(s.device_ms, std::accumulate(ms.begin() + static_cast<std::ptrdiff_t>(w * filters),
                                                        ms.begin() + static_cast<std::ptrdiff_t>((w + 1) * filters), 0.0));
  s.signature_pairs = std::accumulate(scored.begin(), scored.end(), std::uint64_t{0});
  // Each pair once, its lower document first: both filters may find it (verified as the
  // thesis's then). (Two ranks may both hold a pair, one from each filter: the results are
  // deduplicated once more at the end.) Sorted as one word a pair, (a, b, not full): the
  // sort then compares words, and the first of a pair's words is its full one if any.
  std::vector<std::size_t> part_begin(found.size() + 1, 0);
  for (std::size_t p = 0; p < found.size(); ++p) part_begin[p + 1] = part_begin[p] + found[p].size();
  std::vector<std::uint64_t> keys(part_begin.back());
  tbb::parallel_for(std::size_t{0}, found.size(), [&](std::size_t p) {
    tbb::parallel_for(std::size_t{0}, found[p].size(), [&](std::size_t i) {
      const Candidate& c = found[p][i];
      keys[part_begin[p] + i] = std::uint64_t{std::min(c.a, c.b)} << 33 | std::uint64_t{std::max(c.a, c.b)} << 1 |
                                (c.full ? 0u : 1u);
    });
  });
  found = {};
  tbb::parallel_sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end(), [](std::uint64_t p, std::uint64_t q) { return p >> 1 == q >> 1; }),
             keys.end());
  // An edit distance is at least the difference of the lengths: pairs too unequal in
  // length cannot pass, whatever their signatures say.
  std::vector<char> can_pass(keys.size());
  tbb::parallel_for(std::size_t{0}, keys.size(), [&](std::size_t k) {
    const std::uint64_t la = docs[keys[k] >> 33].length, lb = docs[(keys[k] >> 1) & kDocumentMask].length;
    can_pass[k] = below_rate(static_cast<std::uint32_t>(std::min<std::uint64_t>(la > lb ? la - lb : lb - la, UINT32_MAX)),
                             la, lb, options.rate);
  });
  Candidates pairs;
  pairs.reserve(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (can_pass[k])
      pairs.push_back({static_cast<std::uint32_t>(keys[k] >> 33), static_cast<std::uint32_t>((keys[k] >> 1) & kDocumentMask),
                       (keys[k] & 1) == 0});
  // Long pairs first, longest first: one started last would leave every other core idle.
  // The rest keep their rows together, whose first document each thread reads once.
  // (Pairs verified only up to the guaranteed edits cost little whatever their length.)
  const auto bytes_of = [&](const Candidate& p) { return p.full ? docs[p.a].length + docs[p.b].length : 0; };
  const auto long_end = std::stable_partition(pairs.begin(), pairs.end(), [&](const Candidate& p) { return bytes_of(p) >= kLongPair; });
  std::sort(pairs.begin(), long_end, [&](const Candidate& p, const Candidate& q) { return bytes_of(p) > bytes_of(q); });
  s.candidates = pairs.size();
  s.candidate_seconds = seconds_since(start);

  start = Clock::now();
  // The largest distance that matters for each pair: below the rate, and for the
  // guarantee's pairs within its edits (none: the pair cannot pass).
  std::vector<std::optional<std::uint32_t>> limits(pairs.size());
  tbb::parallel_for(std::size_t{0}, pairs.size(), [&](std::size_t k) {
    const Candidate& p = pairs[k];
    limits[k] = largest_distance_below(options.rate, docs[p.a].length + docs[p.b].length);
    if (limits[k] && !p.full) limits[k] = std::min(*limits[k], options.guaranteed_edits);
  });
  // Each pair's distance, where within its limit: written by the cores and the GPUs, each
  // pair by one of them.
  std::vector<std::optional<std::uint32_t>> distances(pairs.size());
  tbb::enumerable_thread_specific<std::pair<FileBytes, FileBytes>> readers_of_pairs;
  const auto verify = [&](std::size_t k) {
    if (!limits[k]) return;
    const std::uint32_t i = pairs[k].a, j = pairs[k].b;
    auto& [ra, rb] = readers_of_pairs.local();
    const std::string_view ta = text_of(docs[i], files[i], ra), tb = text_of(docs[j], files[j], rb);
    distances[k] = edit_distance_within(ta, tb, *limits[k]);
  };
  // With GPUs, they verify the pairs of documents in memory whose limits their bands hold
  // (gpu_band_edits) while the cores take the rest from the start. Long pairs with narrow
  // limits (the guarantee's) stay on the cores, which verify them fast, while a warp would
  // take long; wide limits are where a warp's 32 lanes gain the most.
  std::vector<char> on_gpu(pairs.size(), 0);
  std::vector<std::size_t> gpu_pairs;
  if (!gpus.empty()) {
    tbb::parallel_for(std::size_t{0}, pairs.size(), [&](std::size_t k) {
      const Document &da = docs[pairs[k].a], &db = docs[pairs[k].b];
      const bool in_memory = (da.length == 0 || !da.kept.empty()) && (db.length == 0 || !db.kept.empty());
      on_gpu[k] = in_memory && limits[k] && *limits[k] <= gpu_band_edits(da.length, db.length) &&
                  (da.length + db.length < kLongPair || *limits[k] > kGpuNarrowEdits);
    });
    for (std::size_t k = 0; k < pairs.size(); ++k)
      if (on_gpu[k]) gpu_pairs.push_back(k);
  }
  // The GPUs' documents packed before the cores start on theirs (packing takes every core).
  s.gpu_verify_seconds = s.gpu_verify_ms = s.cores_verify_seconds = 0;
  std::vector<GpuTextsPtr> sent = sending.valid() ? sending.get() : std::vector<GpuTextsPtr>{};
  const GpuWork work = gpu_pairs.empty() ? GpuWork{} : gpu_work(docs, pairs, gpu_pairs, std::move(sent));
  s.pack_seconds = seconds_since(start);
  const auto packed = Clock::now();
  // Long pairs one a task (a range of them run by one thread would serialise the longest),
  // beside the rest in ranges (whose rows share their first document).
  const auto long_count = static_cast<std::size_t>(long_end - pairs.begin());
  const auto verify_range = [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t k = range.begin(); k != range.end(); ++k)
      if (!on_gpu[k]) verify(k);
  };
  tbb::task_group group;
  std::atomic<int> cores_left{2};
  const auto cores_done = [&] {
    if (--cores_left == 0) s.cores_verify_seconds = seconds_since(packed);
  };
  group.run([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, long_count, 1), verify_range, tbb::simple_partitioner());
    cores_done();
  });
  group.run([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(long_count, pairs.size()), verify_range);
    cores_done();
  });
  if (!gpu_pairs.empty()) {
    try {
      verify_on_gpus(work, pairs, limits, gpus, &s.gpu_verify_ms, distances);
      s.gpu_verify_seconds = seconds_since(packed);
      s.device_ms += s.gpu_verify_ms;
    } catch (...) {
      group.wait();
      throw;
    }
  }
  group.wait();
  // The pairs within their limits in (a, b) order: the candidates after the long ones are
  // in that order already, the long ones' few are sorted and merged in.
  std::vector<RateMatch> all;
  std::size_t long_matches = 0;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if (!distances[k]) continue;
    const std::uint32_t d = *distances[k];
    const std::uint64_t total = docs[pairs[k].a].length + docs[pairs[k].b].length;
    all.push_back({pairs[k].a, pairs[k].b, d, total == 0 ? 0.0 : static_cast<double>(d) / static_cast<double>(total)});
    if (k < long_count) ++long_matches;
  }
  const auto by_documents = [](const RateMatch& p, const RateMatch& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; };
  const auto long_matches_end = all.begin() + static_cast<std::ptrdiff_t>(long_matches);
  std::sort(all.begin(), long_matches_end, by_documents);
  std::inplace_merge(all.begin(), long_matches_end, all.end(), by_documents);
  if (cluster::size() > 1) {  // every rank's pairs on rank 0 (each once); the candidates of all ranks counted
    all = cluster::gather_values<RateMatch>(all);
    std::vector<std::uint64_t> count = {s.candidates, s.signature_pairs};
    cluster::sum(count);
    s.candidates = count[0];
    s.signature_pairs = count[1];
    tbb::parallel_sort(all.begin(), all.end(), by_documents);
    all.erase(std::unique(all.begin(), all.end()), all.end());
  }
  s.verify_seconds = seconds_since(start);
  return all;
}

}  // namespace simkit::dedup
