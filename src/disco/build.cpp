// Corpus to model: two passes over the corpus, read in pieces of whole lines (text,
// compressed text or Wikipedia dumps: text/line_source.hpp): word counts, then window
// triples, collected as packed 64-bit keys a piece, sorted in parallel and counted in
// bounded memory (key_counts.hpp); the MI (lin) or PPMI (ppmi) of each word's triples as
// the counts come out in order. PPMI keys keep the distance d (slot d - 1) so that
// distance weights apply as a word's run is summed: every count stays an integer.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <xxhash.h>
#include <tbb/concurrent_vector.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "text/line_source.hpp"
#include "text/lines.hpp"
#include "text/utf8.hpp"
#include "disco/gpu.hpp"
#include "disco/key_counts.hpp"
#include "simkit/cluster.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"
#include "simkit/tokenize.hpp"

namespace simkit::disco {

namespace {

constexpr std::size_t kBlock = 2048;  // lines a task
// A kept block's tokens (pass 1): a word's number in its thread's dictionary, or these.
constexpr std::uint32_t kStopWord = 0xFFFFFFFF, kLineEnd = 0xFFFFFFFE;

std::unordered_set<std::string> load_stopwords(const std::string& spec) {
  std::unordered_set<std::string> stop;
  if (spec == "none") return stop;
  if (spec == "english") {
    for (const std::string_view w : english_stopwords()) stop.emplace(w);
    return stop;
  }
  const MappedFile file = MappedFile::open(spec);
  for_each_line(file.text(), [&](std::string_view word, std::uint64_t number) {
    while (!word.empty() && (word.back() == '\r' || word.back() == ' ' || word.back() == '\t')) word.remove_suffix(1);
    if (first_invalid_utf8(word) != std::string_view::npos)
      throw InputError(Location::at_line(spec, number), "stop word is not valid UTF-8");
    if (!word.empty()) stop.emplace(word);
  });
  return stop;
}

// The slot of relation r (-(w-1)..-1, 1..w-1) among 0..2(w-1)-1.
int slot_of(int r, int window) { return r < 0 ? r + (window - 1) : r + (window - 2); }

// Half the machine's memory (at least 256 MiB): the default counting budget.
std::size_t default_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::size_t total = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : std::size_t{8} << 30;
  return std::max<std::size_t>(total / 2, std::size_t{256} << 20);
}

// Each file's lines, a piece at a time, split into blocks of kBlock lines that
// body(block_lines, first_line_number, file) handles in parallel; after(bytes) follows each
// piece, with the input bytes it took. Under mpirun each rank reads every piece and
// counts its share, piece k going to rank k mod N (body is not called for the others).
template <typename Body, typename After>
void for_each_piece(const std::vector<std::string>& files, TextFormat format, std::size_t piece_bytes,
                    Progress* progress, Body&& body, After&& after) {
  std::string piece;
  std::size_t index = 0;
  const auto ranks = static_cast<std::size_t>(cluster::size()), rank = static_cast<std::size_t>(cluster::rank());
  for (const std::string& file : files) {
    const std::unique_ptr<LineSource> source = open_lines(file, format);
    std::uint64_t consumed = 0;
    while (source->next(piece, piece_bytes)) {
      std::vector<std::string_view> lines;
      if (index++ % ranks != rank) piece.clear();  // another rank's: nothing to count here
      for_each_line(piece, [&](std::string_view line, std::uint64_t) { lines.push_back(line); });
      const std::size_t blocks = (lines.size() + kBlock - 1) / kBlock;
      tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const std::size_t first = b * kBlock, last = std::min(lines.size(), first + kBlock);
        body(std::span<const std::string_view>(lines.data() + first, last - first), source->first_line() + first,
             source->path());
      });
      after(source->consumed() - consumed);
      if (progress != nullptr) progress->advance(source->consumed() - consumed);
      consumed = source->consumed();
    }
  }
}

// The words of several threads' dictionaries (each: ids, word -> number, and counts by
// number) with their counts summed, in any order. In parallel: each dictionary's words
// are dealt into shards by hash, each shard summed on its own.
template <typename Dictionaries>
std::vector<std::pair<std::string, std::uint64_t>> sum_counts(const Dictionaries& dictionaries) {
  constexpr std::size_t kShards = 64;
  using Entries = std::vector<std::pair<std::string_view, std::uint64_t>>;
  std::vector<const typename Dictionaries::value_type*> from;
  for (const auto& dictionary : dictionaries) from.push_back(&dictionary);
  std::vector<std::vector<Entries>> dealt(from.size(), std::vector<Entries>(kShards));
  tbb::parallel_for(std::size_t{0}, from.size(), [&](std::size_t d) {
    for (const auto& [word, i] : from[d]->ids)
      dealt[d][std::hash<std::string_view>{}(word) % kShards].emplace_back(word, from[d]->counts[i]);
  });
  std::vector<std::vector<std::pair<std::string, std::uint64_t>>> shards(kShards);
  tbb::parallel_for(std::size_t{0}, kShards, [&](std::size_t s) {
    std::unordered_map<std::string_view, std::uint64_t> sums;
    for (const std::vector<Entries>& entries : dealt)
      for (const auto& [word, count] : entries[s]) sums[word] += count;
    for (const auto& [word, count] : sums) shards[s].emplace_back(word, count);
  });
  std::vector<std::pair<std::string, std::uint64_t>> all;
  for (auto& shard : shards) std::move(shard.begin(), shard.end(), std::back_inserter(all));
  return all;
}

// Word counts as bytes for the ranks' exchange: a length, the word, its count, each.
std::string encode_counts(const std::vector<std::pair<std::string, std::uint64_t>>& counts) {
  std::string bytes;
  for (const auto& [word, count] : counts) {
    const auto length = static_cast<std::uint32_t>(word.size());
    bytes.append(reinterpret_cast<const char*>(&length), sizeof length).append(word);
    bytes.append(reinterpret_cast<const char*>(&count), sizeof count);
  }
  return bytes;
}

void add_counts(std::string_view bytes, std::unordered_map<std::string, std::uint64_t>& counts) {
  while (!bytes.empty()) {
    std::uint32_t length = 0;
    std::uint64_t count = 0;
    std::memcpy(&length, bytes.data(), sizeof length);
    const std::string_view word = bytes.substr(sizeof length, length);
    std::memcpy(&count, bytes.data() + sizeof length + length, sizeof count);
    counts[std::string(word)] += count;
    bytes.remove_prefix(sizeof length + length + sizeof count);
  }
}

// Every rank's sorted (key, count) runs into root's `into`, in rounds of at most
// kPairsARound pairs a rank (each round's messages stay far below MPI's 2 GiB).
void merge_at_root(KeyCounts& mine, std::unique_ptr<KeyCounts>& into, std::size_t budget,
                   const std::vector<std::uint64_t>& bounds, const std::vector<std::uint64_t>& fold) {
  using Pair = std::pair<std::uint64_t, std::uint64_t>;
  constexpr std::size_t kPairsARound = std::size_t{1} << 22;
  std::vector<Pair> pairs;
  mine.for_each([&](std::uint64_t key, std::uint64_t count) { pairs.emplace_back(key, count); });
  if (cluster::root()) into = std::make_unique<KeyCounts>(budget, bounds, fold);
  const std::uint64_t rounds = cluster::max((pairs.size() + kPairsARound - 1) / kPairsARound);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    const std::size_t first = std::min(pairs.size(), r * kPairsARound);
    const std::size_t last = std::min(pairs.size(), first + kPairsARound);
    const std::vector<std::string> parts = cluster::gather(
        {reinterpret_cast<const char*>(pairs.data() + first), (last - first) * sizeof(Pair)});
    for (const std::string& part : parts) {
      std::vector<Pair> run(part.size() / sizeof(Pair));
      if (!run.empty()) std::memcpy(static_cast<void*>(run.data()), part.data(), part.size());
      into->add_counted(std::move(run));
    }
  }
}

// Where the triples' partitions start (KeyCounts): at words, so that a word's triples
// stay together, about equal in tokens (a word's triples grow with its count) among the
// first n words of `kept` (most frequent first), four partitions a thread.
std::vector<std::uint64_t> partition_bounds(const std::vector<std::pair<std::string, std::uint64_t>>& kept,
                                            std::size_t n) {
  const std::size_t parts = 4 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  std::uint64_t tokens = 0;
  for (std::size_t w = 0; w < n; ++w) tokens += kept[w].second;
  std::vector<std::uint64_t> bounds;
  std::uint64_t seen = 0;
  for (std::size_t w = 0; w + 1 < n; ++w) {
    seen += kept[w].second;
    if (seen * parts >= (bounds.size() + 1) * tokens) bounds.push_back(std::uint64_t{w + 1} << 32);
  }
  return bounds;
}

// The blocks' words as the model's ids in one array for the GPU's counting
// (gpu.hpp): detail::kPlace for a stop or rare word, detail::kSentenceEnd after each
// line, tokens that subsampled(id, file hash, line, place) drops left out. Each block's
// tokens are freed once converted.
template <typename Blocks, typename Subsampled>
std::vector<std::int32_t> model_tokens(Blocks& blocks, const Subsampled& subsampled) {
  std::vector<std::vector<std::int32_t>> each(blocks.size());
  tbb::parallel_for(std::size_t{0}, blocks.size(), [&](std::size_t b) {
    auto& block = blocks[b];
    std::vector<std::int32_t>& out = each[b];
    out.reserve(block.tokens.size());
    const std::uint64_t file_hash = XXH3_64bits(block.file.data(), block.file.size());
    std::uint64_t line = block.first_line;
    std::size_t place = 0;
    for (const std::uint32_t t : block.tokens) {
      if (t == kLineEnd) {
        out.push_back(detail::kSentenceEnd);
        ++line;
        place = 0;
        continue;
      }
      const std::int64_t w = t == kStopWord ? -1 : block.dictionary->final_ids[t];
      if (!subsampled(w, file_hash, line, place++)) out.push_back(w < 0 ? detail::kPlace : static_cast<std::int32_t>(w));
    }
    std::vector<std::uint32_t>().swap(block.tokens);
  });
  std::vector<std::size_t> at(each.size() + 1, 0);
  for (std::size_t b = 0; b < each.size(); ++b) at[b + 1] = at[b] + each[b].size();
  std::vector<std::int32_t> tokens(at.back());
  tbb::parallel_for(std::size_t{0}, each.size(), [&](std::size_t b) {
    std::copy(each[b].begin(), each[b].end(), tokens.begin() + static_cast<std::ptrdiff_t>(at[b]));
  });
  return tokens;
}

}  // namespace

std::optional<std::size_t> Model::find(std::string_view word) const {
  for (std::size_t i = 0; i < words.size(); ++i)
    if (words[i] == word) return i;
  return std::nullopt;
}

Measure parse_measure(const std::string& name) {
  if (name == "lin") return Measure::lin;
  if (name == "ppmi") return Measure::ppmi;
  throw UsageError(fmt::format("--measure {}: expected lin or ppmi", quote(name)));
}

const char* measure_name(Measure measure) { return measure == Measure::ppmi ? "ppmi" : "lin"; }

Model build(const std::vector<std::string>& files, const BuildOptions& options, Progress* progress,
            BuildTimings* timings) {
  auto stamp = std::chrono::steady_clock::now();
  const auto lap = [&](double BuildTimings::*field) {
    const auto now = std::chrono::steady_clock::now();
    if (timings != nullptr) timings->*field = std::chrono::duration<double>(now - stamp).count();
    stamp = now;
  };
  if (options.window < 2 || options.window > 64) throw UsageError("--window must be 2..64");
  const bool ppmi = options.measure == Measure::ppmi;
  if (ppmi && !(options.ppmi.alpha > 0 && options.ppmi.alpha <= 1))
    throw UsageError("--alpha must be in (0, 1]");
  if (ppmi && !(options.ppmi.shift >= 1 && std::isfinite(options.ppmi.shift)))
    throw UsageError("--shift must be at least 1 (k: ln k is subtracted from every PMI)");
  if (!(options.subsample >= 0 && options.subsample < 1)) throw UsageError("--subsample must be in [0, 1)");
  for (const std::string& f : files)
    if (f == "-") throw UsageError("disco build reads its corpus twice: standard input cannot be a corpus file");
  const std::unordered_set<std::string> stop =
      load_stopwords(options.stopwords.empty() ? (ppmi ? "none" : "english") : options.stopwords);
  const std::size_t budget = options.memory_budget != 0 ? options.memory_budget : default_budget();
  // A piece's keys take about eight times its bytes: pieces of 1/32 of the budget.
  // (Root's size on every rank: the pieces are the ranks' shares.)
  const std::size_t piece_bytes = cluster::broadcast_values(std::vector<std::size_t>{
      std::clamp<std::size_t>(budget / 32, std::size_t{1} << 20, std::size_t{64} << 20)})[0];
  tbb::enumerable_thread_specific<Tokenizer> tokenizers([&] { return Tokenizer(!options.keep_case); });
  // body(words) for each line of a block; invalid UTF-8 refused with its line and column.
  const auto for_each_line_words = [&](std::span<const std::string_view> lines, std::uint64_t first_line,
                                       const std::string& file, auto&& body) {
    Tokenizer& tokenizer = tokenizers.local();
    std::vector<std::string> words;
    for (std::size_t l = 0; l < lines.size(); ++l) {
      if (const std::size_t bad = first_invalid_utf8(lines[l]); bad != std::string_view::npos)
        throw InputError(Location::at_line(file, first_line + l, bad + 1), "not valid UTF-8 text");
      tokenizer.split(lines[l], words);
      body(words);
    }
  };

  // Pass 1: word counts (stop words left out). Each thread numbers the words it meets in
  // a dictionary of its own; while they fit an eighth of the budget, each block's words
  // are kept as those numbers, so that pass 2 reads them instead of splitting the text
  // again (the splitting and the words' lookups are most of a pass).
  struct Dictionary {
    std::unordered_map<std::string, std::uint32_t> ids;
    std::vector<std::uint64_t> counts;
    std::vector<std::int64_t> final_ids;  // after pass 1: the model's id of each, -1 if dropped
  };
  struct Block {
    const Dictionary* dictionary = nullptr;
    std::size_t piece = 0;
    std::uint64_t first_line = 0;
    std::string file;
    std::vector<std::uint32_t> tokens;  // dictionary numbers, kStopWord and kLineEnd
  };
  tbb::enumerable_thread_specific<Dictionary> dictionaries;
  tbb::concurrent_vector<Block> blocks;
  std::vector<std::uint64_t> piece_input;  // each piece's input bytes (pass 2's progress)
  std::atomic<std::size_t> kept_bytes{0};
  std::atomic<bool> keep_tokens{true};
  for_each_piece(files, options.format, piece_bytes, progress,
                 [&](std::span<const std::string_view> lines, std::uint64_t first, const std::string& file) {
                   Dictionary& dictionary = dictionaries.local();
                   const bool keep = keep_tokens.load(std::memory_order_relaxed);
                   Block block{&dictionary, piece_input.size(), first, file, {}};
                   for_each_line_words(lines, first, file, [&](std::vector<std::string>& words) {
                     for (std::string& w : words) {
                       if (stop.contains(w)) {
                         if (keep) block.tokens.push_back(kStopWord);
                         continue;
                       }
                       const auto [it, added] =
                           dictionary.ids.try_emplace(std::move(w), static_cast<std::uint32_t>(dictionary.counts.size()));
                       if (added) dictionary.counts.push_back(0);
                       ++dictionary.counts[it->second];
                       if (keep) block.tokens.push_back(it->second);
                     }
                     if (keep) block.tokens.push_back(kLineEnd);
                   });
                   if (!keep) return;
                   const std::size_t bytes = block.tokens.size() * sizeof(std::uint32_t);
                   if (kept_bytes.fetch_add(bytes) + bytes > budget / 8) keep_tokens = false;
                   else blocks.push_back(std::move(block));
                 },
                 [&](std::uint64_t bytes) { piece_input.push_back(bytes); });
  if (!keep_tokens) blocks = {};  // too large to keep: pass 2 splits the text again
  std::vector<std::pair<std::string, std::uint64_t>> counts = sum_counts(dictionaries);
  if (cluster::size() > 1) {  // every rank's counts summed on root
    const std::vector<std::string> parts = cluster::gather(encode_counts(counts));
    std::unordered_map<std::string, std::uint64_t> sums;
    for (const std::string& part : parts) add_counts(part, sums);
    counts.assign(sums.begin(), sums.end());
  }
  std::vector<std::pair<std::string, std::uint64_t>> kept;
  std::uint64_t tokens = 0;  // every counted token, for subsampling's frequencies
  for (auto& [w, c] : counts) {
    tokens += c;
    if (c >= options.min_count) kept.emplace_back(std::move(w), c);
  }
  counts = {};
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (cluster::size() > 1) {  // root's words, counts and total on every rank
    std::vector<std::string> words;
    std::vector<std::uint64_t> numbers;
    for (auto& [w, c] : kept) {
      words.push_back(std::move(w));
      numbers.push_back(c);
    }
    numbers.push_back(tokens);
    words = cluster::broadcast_strings(std::move(words));
    numbers = cluster::broadcast_values(std::move(numbers));
    tokens = numbers.back();
    kept.clear();
    for (std::size_t i = 0; i < words.size(); ++i) kept.emplace_back(std::move(words[i]), numbers[i]);
  }
  lap(&BuildTimings::words_s);
  // Lin's keys hold the relation (2 (window - 1) slots), PPMI's the distance (window - 1).
  const int window = options.window, relations = ppmi ? window - 1 : 2 * (window - 1);
  if (kept.size() > 0xFFFFFFFFull / relations)
    throw InputError(Location{files.empty() ? "" : files[0]}, "too many distinct words for 32-bit feature ids");
  std::unordered_map<std::string, std::uint32_t> id;
  id.reserve(kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) id.emplace(kept[i].first, static_cast<std::uint32_t>(i));
  std::vector<Dictionary*> each_dictionary;
  for (Dictionary& dictionary : dictionaries) each_dictionary.push_back(&dictionary);
  tbb::parallel_for(std::size_t{0}, each_dictionary.size(), [&](std::size_t d) {
    Dictionary& dictionary = *each_dictionary[d];
    dictionary.final_ids.assign(dictionary.counts.size(), -1);
    for (const auto& [w, i] : dictionary.ids)
      if (const auto it = id.find(w); it != id.end()) dictionary.final_ids[i] = it->second;
    dictionary.ids = {};
  });
  const std::size_t n = options.words == 0 ? kept.size() : std::min(options.words, kept.size());
  // Subsampling: word i's tokens are dropped when a hash of the token's place, as a
  // number in [0, 1), falls below discard[i] = 1 - sqrt(t / f).
  std::vector<double> discard;
  if (options.subsample > 0) {
    discard.resize(kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i)
      discard[i] = std::max(0.0, 1 - std::sqrt(options.subsample * static_cast<double>(tokens) /
                                                  static_cast<double>(kept[i].second)));
  }
  // Whether subsampling drops word w's token at place p of a line.
  const auto subsampled = [&](std::int64_t w, std::uint64_t file_hash, std::uint64_t line, std::size_t p) {
    if (w < 0 || discard.empty() || discard[static_cast<std::size_t>(w)] <= 0) return false;
    const std::uint64_t place[3] = {file_hash, line, p};
    const double u = static_cast<double>(XXH3_64bits_withSeed(place, sizeof place, options.seed) >> 11) * 0x1p-53;
    return u < discard[static_cast<std::size_t>(w)];
  };
  // A pair at distance d: Lin's weight is 1; PPMI's L - d + 1 with distance weighting
  // (L = window - 1; proportional to word2vec's expected (L - d + 1) / L), else 1.
  const auto weight = [&](int d) -> std::uint64_t {
    return ppmi && options.ppmi.weighted ? static_cast<std::uint64_t>(window - d) : 1;
  };

  // Pass 2: triples. Keys: w1 << 32 | (w2 * relations + slot), for w1 among the N words;
  // column marginals (Lin: ||*, r, w2||, PPMI: #(w2)) and Lin's totals ||*, r, *|| over
  // every word.
  const std::size_t cells = kept.size() * (ppmi ? 1 : relations);
  std::vector<std::atomic<std::uint64_t>> column(cells);
  std::vector<std::atomic<std::uint64_t>> total(relations);
  // Each thread sums the marginals in arrays of its own where they fit an eighth of the
  // budget (the most frequent words' cells would bounce between the cores' caches).
  const bool local_marginals =
      (cells + relations) * sizeof(std::uint64_t) * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()) <=
      budget / 8;
  tbb::enumerable_thread_specific<std::vector<std::uint64_t>> marginals_of_thread(
      [&] { return std::vector<std::uint64_t>(local_marginals ? cells + relations : 0); });
  const std::vector<std::uint64_t> bounds = partition_bounds(kept, n);
  // PPMI sums a context's distances at once: the counts fold them (key slot 0, count
  // weighted), so that the runs hold one pair per word and context.
  std::vector<std::uint64_t> fold;
  if (ppmi)
    for (int d = 1; d < window; ++d) fold.push_back(weight(d));
  KeyCounts triples_counted(budget / 2, bounds, fold);
  {
    // One sentence's words by position (-1: a stop or rare word, which keeps its place):
    // subsampling, then every pair within the window, into `mine` and the marginals.
    tbb::enumerable_thread_specific<std::vector<std::uint64_t>> keys;
    const auto count_sentence = [&](std::span<const std::int64_t> words, std::uint64_t file_hash,
                                    std::uint64_t line, std::vector<std::int64_t>& ids,
                                    std::vector<std::uint64_t>& mine) {
      std::uint64_t* local = local_marginals ? marginals_of_thread.local().data() : nullptr;
      const auto add_column = [&](std::size_t cell, std::uint64_t w) {
        if (local != nullptr) local[cell] += w;
        else column[cell].fetch_add(w, std::memory_order_relaxed);
      };
      const auto add_total = [&](int slot) {
        if (local != nullptr) ++local[cells + static_cast<std::size_t>(slot)];
        else total[static_cast<std::size_t>(slot)].fetch_add(1, std::memory_order_relaxed);
      };
      ids.clear();
      for (std::size_t p = 0; p < words.size(); ++p)
        if (!subsampled(words[p], file_hash, line, p)) ids.push_back(words[p]);  // else the window reaches past it
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0) continue;
        for (int d = 1; d < window && i + d < ids.size(); ++d) {
          if (ids[i + d] < 0) continue;
          const auto a = static_cast<std::uint64_t>(ids[i]), c = static_cast<std::uint64_t>(ids[i + d]);
          if (ppmi) {
            const std::uint64_t w = weight(d);
            add_column(c, w);
            add_column(a, w);
            if (a < n) mine.push_back(a << 32 | (c * relations + (d - 1)));
            if (c < n) mine.push_back(c << 32 | (a * relations + (d - 1)));
            continue;
          }
          const int forward = slot_of(d, window), backward = slot_of(-d, window);
          add_column(c * relations + forward, 1);
          add_total(forward);
          add_column(a * relations + backward, 1);
          add_total(backward);
          if (a < n) mine.push_back(a << 32 | (c * relations + forward));
          if (c < n) mine.push_back(c << 32 | (a * relations + backward));
        }
      }
    };
    const auto add_keys = [&] {
      std::vector<std::vector<std::uint64_t>*> batches;
      for (std::vector<std::uint64_t>& mine : keys) batches.push_back(&mine);
      triples_counted.add(batches);
    };
    const auto asked = std::chrono::steady_clock::now();
    const int device = options.device_after_first_pass ? options.device_after_first_pass() : options.device;
    if (timings != nullptr)
      timings->device_wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    // The device takes the words as 32-bit ids (the CPU counts a larger vocabulary).
    const bool on_device = keep_tokens && device >= 0 && kept.size() <= 0x7FFFFFFFu;
    if (timings != nullptr) timings->on_device = on_device;
    if (on_device) {
      // The words pass 1 kept, as the model's ids, counted on the GPU.
      const std::vector<std::int32_t> ids = model_tokens(blocks, subsampled);
      blocks = {};
      std::vector<std::uint64_t> marginals(cells);
      detail::PairCountJob job{.device = device, .tokens = ids, .window = window, .ppmi = ppmi, .rows = n,
                               .fold = fold, .bounds = bounds, .memory_budget = options.memory_budget};
      const double device_ms = detail::count_pairs_gpu(job, marginals, [&](std::vector<detail::CountedRun> parts) {
        triples_counted.add_counted_parts(std::move(parts));
      });
      if (timings != nullptr) timings->pairs_device_ms = device_ms;
      tbb::parallel_for(std::size_t{0}, cells, [&](std::size_t i) { column[i] = marginals[i]; });
      if (!ppmi) {  // Lin's ||*, r, *||: each relation's column cells summed
        std::vector<std::uint64_t> totals(static_cast<std::size_t>(relations));
        for (std::size_t i = 0; i < cells; ++i) totals[i % totals.size()] += marginals[i];
        for (std::size_t r = 0; r < totals.size(); ++r) total[r] = totals[r];
      }
      if (progress != nullptr)
        for (const std::uint64_t bytes : piece_input) progress->advance(bytes);
    } else if (keep_tokens) {
      // The words pass 1 kept, a piece's blocks at a time.
      std::vector<std::size_t> order(blocks.size());
      for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
      std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return blocks[x].piece < blocks[y].piece; });
      for (std::size_t at = 0, piece = 0; piece < piece_input.size(); ++piece) {
        std::size_t end = at;
        while (end < order.size() && blocks[order[end]].piece == piece) ++end;
        tbb::parallel_for(at, end, [&](std::size_t o) {
          const Block& block = blocks[order[o]];
          std::vector<std::uint64_t>& mine = keys.local();
          std::vector<std::int64_t> sentence, ids;
          const std::uint64_t file_hash = XXH3_64bits(block.file.data(), block.file.size());
          std::uint64_t line = block.first_line;
          for (const std::uint32_t t : block.tokens) {
            if (t == kLineEnd) {
              count_sentence(sentence, file_hash, line++, ids, mine);
              sentence.clear();
            } else {
              sentence.push_back(t == kStopWord ? -1 : block.dictionary->final_ids[t]);
            }
          }
        });
        add_keys();
        if (progress != nullptr) progress->advance(piece_input[piece]);
        at = end;
      }
    } else {
      for_each_piece(files, options.format, piece_bytes, progress,
                     [&](std::span<const std::string_view> lines, std::uint64_t first, const std::string& file) {
                       std::vector<std::uint64_t>& mine = keys.local();
                       std::vector<std::int64_t> sentence, ids;
                       const std::uint64_t file_hash = XXH3_64bits(file.data(), file.size());
                       std::uint64_t line = first;
                       for_each_line_words(lines, first, file, [&](const std::vector<std::string>& words) {
                         sentence.clear();
                         for (const std::string& w : words) {
                           const auto it = id.find(w);
                           sentence.push_back(it == id.end() ? std::int64_t{-1} : std::int64_t{it->second});
                         }
                         count_sentence(sentence, file_hash, line++, ids, mine);
                       });
                     },
                     [&](std::uint64_t) { add_keys(); });
    }
  }

  if (local_marginals)
    for (const std::vector<std::uint64_t>& local : marginals_of_thread)
      tbb::parallel_for(std::size_t{0}, cells + relations, [&](std::size_t i) {
        if (i < cells) column[i].fetch_add(local[i], std::memory_order_relaxed);
        else total[i - cells].fetch_add(local[i], std::memory_order_relaxed);
      });
  marginals_of_thread.clear();

  lap(&BuildTimings::pairs_s);
  KeyCounts* triples = &triples_counted;
  std::unique_ptr<KeyCounts> merged;  // under mpirun: every rank's triples, on root
  if (cluster::size() > 1) {
    std::vector<std::uint64_t> marginals(cells + relations);
    for (std::size_t i = 0; i < cells; ++i) marginals[i] = column[i].load();
    for (int r = 0; r < relations; ++r) marginals[cells + r] = total[r].load();
    cluster::sum(marginals);
    for (std::size_t i = 0; i < cells; ++i) column[i] = marginals[i];
    for (int r = 0; r < relations; ++r) total[r] = marginals[cells + r];
    merge_at_root(triples_counted, merged, budget / 2, bounds, fold);
    if (!cluster::root()) return {};  // root scores the words and writes the model
    triples = merged.get();
  }

  // The triples in key order: a word's run of triples at a time gives its row marginals
  // ||w1, r, *|| and then the MI of each (formula 3.7), MI > 0 kept. The partitions (whole
  // words each) are scored in parallel when nothing was spilled, then joined in order.
  Model model;
  model.measure = options.measure;
  if (ppmi) model.ppmi = options.ppmi;
  model.subsample = options.subsample;
  model.window = window;
  model.keep_case = options.keep_case;
  model.feature_words = kept.size();
  for (std::size_t i = 0; i < n; ++i) {
    model.words.push_back(kept[i].first);
    model.counts.push_back(kept[i].second);
  }
  // PPMI: #(c)^alpha for each context and their sum; exact integers when alpha is 1, so
  // that a PMI that is 0 in exact arithmetic comes out 0, not an ulp either side of the
  // cut (one log of the whole ratio below, not a sum of four logs).
  std::vector<double> context_power;
  double smoothed_total = 0;
  const double log_shift = std::log(options.ppmi.shift);
  if (ppmi) {
    context_power.resize(kept.size());
    for (std::size_t c = 0; c < kept.size(); ++c) {
      const double count = static_cast<double>(column[c].load());
      context_power[c] = options.ppmi.alpha == 1 ? count : std::pow(count, options.ppmi.alpha);
      smoothed_total += context_power[c];
    }
  }
  struct Rows {  // the rows of words [first, end): features, scores, each row's size
    std::vector<std::uint32_t> features;
    std::vector<float> mi;
    std::vector<std::uint64_t> sizes;
  };
  // Scores words [first, end) from their triples, which each(body) gives in key order.
  const auto score_words = [&](std::size_t first, std::size_t end, auto&& each) {
    Rows out;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> run;  // one word's (feature, count)
    std::vector<std::uint64_t> row(relations);
    const auto finish_lin = [&] {
      std::fill(row.begin(), row.end(), 0);
      for (const auto& [feature, c] : run) row[feature % relations] += c;
      for (const auto& [feature, c] : run) {
        const int slot = static_cast<int>(feature % relations);
        const double mi =
            std::log(static_cast<double>(c) * static_cast<double>(total[slot].load()) /
                     (static_cast<double>(row[slot]) *
                      static_cast<double>(column[std::size_t{feature / relations} * relations + slot].load())));
        if (mi > 0) {
          out.features.push_back(feature);
          out.mi.push_back(static_cast<float>(mi));
        }
      }
    };
    const auto finish_ppmi = [&] {  // one key a context, its distances folded and weighted
      std::uint64_t row_sum = 0;
      for (const auto& [key, c] : run) row_sum += c;
      for (const auto& [key, c] : run) {
        const auto context = static_cast<std::uint32_t>(key / relations);
        const double pmi = std::log(static_cast<double>(c) * smoothed_total /
                                    (static_cast<double>(row_sum) * context_power[context])) -
                           log_shift;
        if (pmi > 0) {
          out.features.push_back(context);
          out.mi.push_back(static_cast<float>(pmi));
        }
      }
    };
    std::size_t word = first, before = 0;
    const auto finish_word = [&] {
      if (ppmi) finish_ppmi();
      else finish_lin();
      out.sizes.push_back(out.features.size() - before);
      before = out.features.size();
      run.clear();
      ++word;
    };
    each([&](std::uint64_t key, std::uint64_t c) {
      while (word < (key >> 32)) finish_word();
      run.emplace_back(static_cast<std::uint32_t>(key & 0xFFFFFFFFu), c);
    });
    while (word < end) finish_word();
    return out;
  };
  std::vector<Rows> parts;
  if (triples->spills() == 0 && triples->partitions() == bounds.size() + 1) {
    parts.resize(triples->partitions());
    tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t p) {
      const std::size_t first = p == 0 ? 0 : bounds[p - 1] >> 32, end = p < bounds.size() ? bounds[p] >> 32 : n;
      parts[p] = score_words(first, end, [&](auto&& body) { triples->for_each_in(p, body); });
    });
  } else {
    parts.push_back(score_words(0, n, [&](auto&& body) { triples->for_each(body); }));
  }
  std::size_t values = 0;
  for (const Rows& part : parts) values += part.features.size();
  model.features.reserve(values);
  model.mi.reserve(values);
  for (Rows& part : parts) {
    for (const std::uint64_t size : part.sizes) model.offsets.push_back(model.offsets.back() + size);
    model.features.insert(model.features.end(), part.features.begin(), part.features.end());
    model.mi.insert(model.mi.end(), part.mi.begin(), part.mi.end());
    part = {};
  }
  compute_sums(model);
  make_dense(model, options.features);
  lap(&BuildTimings::scores_s);
  return model;
}

}  // namespace simkit::disco
