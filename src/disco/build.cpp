// Corpus to MI model: two passes over the lines (word counts, then window triples),
// triples collected as packed 64-bit keys per block, sorted in parallel and counted.
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include "core/lines.hpp"
#include "core/utf8.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"
#include "simkit/tokenize.hpp"

namespace simkit::disco {

namespace {

struct Line {
  std::string_view text;
  std::size_t file = 0;
  std::uint64_t number = 0;
};

constexpr std::size_t kBlock = 2048;  // lines a task

std::unordered_set<std::string> load_stopwords(const std::string& spec) {
  std::unordered_set<std::string> stop;
  if (spec == "none") return stop;
  if (spec.empty()) {
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

}  // namespace

std::optional<std::size_t> Model::find(std::string_view word) const {
  for (std::size_t i = 0; i < words.size(); ++i)
    if (words[i] == word) return i;
  return std::nullopt;
}

Model build(const std::vector<std::string>& files, const BuildOptions& options, Progress* progress) {
  if (options.window < 2 || options.window > 64) throw UsageError("--window must be 2..64");
  const std::unordered_set<std::string> stop = load_stopwords(options.stopwords);
  std::vector<MappedFile> mapped;
  std::vector<Line> lines;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::string_view text = mapped.emplace_back(open_text(files[f])).text();
    for_each_line(text, [&](std::string_view line, std::uint64_t number) { lines.push_back({line, f, number}); });
  }
  const std::size_t blocks = (lines.size() + kBlock - 1) / kBlock;
  tbb::enumerable_thread_specific<Tokenizer> tokenizers([&] { return Tokenizer(!options.keep_case); });
  const auto for_each_line_words = [&](std::size_t block, auto&& body) {
    Tokenizer& tokenizer = tokenizers.local();
    std::vector<std::string> words;
    std::uint64_t bytes = 0;
    for (std::size_t l = block * kBlock; l < std::min(lines.size(), (block + 1) * kBlock); ++l) {
      const Line& line = lines[l];
      if (const std::size_t bad = first_invalid_utf8(line.text); bad != std::string_view::npos)
        throw InputError(Location::at_line(files[line.file], line.number, bad + 1), "not valid UTF-8 text");
      tokenizer.split(line.text, words);
      body(words);
      bytes += line.text.size() + 1;
    }
    if (progress) progress->advance(bytes);
  };

  // Pass 1: word counts (stop words left out).
  std::vector<std::unordered_map<std::string, std::uint64_t>> partial(blocks);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    for_each_line_words(b, [&](std::vector<std::string>& words) {
      for (std::string& w : words)
        if (!stop.contains(w)) ++partial[b][std::move(w)];
    });
  });
  std::unordered_map<std::string, std::uint64_t> counts;
  for (auto& block : partial) {
    for (auto& [w, c] : block) counts[w] += c;
    block = {};
  }
  std::vector<std::pair<std::string, std::uint64_t>> kept;
  for (auto& [w, c] : counts)
    if (c >= options.min_count) kept.emplace_back(w, c);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  const int window = options.window, relations = 2 * (window - 1);
  if (kept.size() > 0xFFFFFFFFull / relations)
    throw InputError(Location{files.empty() ? "" : files[0]}, "too many distinct words for 32-bit feature ids");
  std::unordered_map<std::string, std::uint32_t> id;
  id.reserve(kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) id.emplace(kept[i].first, static_cast<std::uint32_t>(i));
  const std::size_t n = options.words == 0 ? kept.size() : std::min(options.words, kept.size());

  // Pass 2: triples. Keys: w1 << 32 | (w2 * relations + slot), for w1 among the N words;
  // column marginals ||*, r, w2|| and totals ||*, r, *|| over every word.
  const std::size_t cells = kept.size() * relations;
  struct Counts {
    std::vector<std::uint64_t> column;
    std::vector<std::uint64_t> total;
  };
  tbb::enumerable_thread_specific<Counts> marginals([&] { return Counts{std::vector<std::uint64_t>(cells, 0), std::vector<std::uint64_t>(relations, 0)}; });
  std::vector<std::vector<std::uint64_t>> keys(blocks);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    Counts& m = marginals.local();
    std::vector<std::int64_t> ids;
    for_each_line_words(b, [&](const std::vector<std::string>& words) {
      ids.clear();
      for (const std::string& w : words) {
        const auto it = id.find(w);
        ids.push_back(it == id.end() ? std::int64_t{-1} : std::int64_t{it->second});  // stop and rare words keep their place
      }
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0) continue;
        for (int d = 1; d < window && i + d < ids.size(); ++d) {
          if (ids[i + d] < 0) continue;
          const auto a = static_cast<std::uint64_t>(ids[i]), c = static_cast<std::uint64_t>(ids[i + d]);
          const int forward = slot_of(d, window), backward = slot_of(-d, window);
          ++m.column[c * relations + forward];
          ++m.total[forward];
          ++m.column[a * relations + backward];
          ++m.total[backward];
          if (a < n) keys[b].push_back(a << 32 | (c * relations + forward));
          if (c < n) keys[b].push_back(c << 32 | (a * relations + backward));
        }
      }
    });
  });
  std::vector<std::uint64_t> column(cells, 0), total(relations, 0);
  for (const Counts& m : marginals) {
    for (std::size_t i = 0; i < cells; ++i) column[i] += m.column[i];
    for (int r = 0; r < relations; ++r) total[r] += m.total[r];
  }
  std::vector<std::uint64_t> all;
  for (auto& k : keys) {
    all.insert(all.end(), k.begin(), k.end());
    k = {};
  }
  tbb::parallel_sort(all.begin(), all.end());

  // Runs of equal keys are the triple counts; the row marginals ||w1, r, *|| are their sums.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> triples;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    triples.emplace_back(all[i], j - i);
    i = j;
  }
  all = {};
  std::vector<std::uint64_t> row(n * relations, 0);
  for (const auto& [key, c] : triples) row[(key >> 32) * relations + (key & 0xFFFFFFFFu) % relations] += c;

  Model model;
  model.window = window;
  model.keep_case = options.keep_case;
  model.feature_words = kept.size();
  for (std::size_t i = 0; i < n; ++i) {
    model.words.push_back(kept[i].first);
    model.counts.push_back(kept[i].second);
  }
  std::size_t t = 0;
  for (std::size_t w = 0; w < n; ++w) {
    double sum = 0;
    for (; t < triples.size() && (triples[t].first >> 32) == w; ++t) {
      const auto feature = static_cast<std::uint32_t>(triples[t].first & 0xFFFFFFFFu);
      const int slot = static_cast<int>(feature % relations);
      const double mi = std::log(static_cast<double>(triples[t].second) * static_cast<double>(total[slot]) /
                                 (static_cast<double>(row[w * relations + slot]) *
                                  static_cast<double>(column[std::size_t{feature / relations} * relations + slot])));
      if (mi > 0) {
        model.features.push_back(feature);
        model.mi.push_back(static_cast<float>(mi));
        sum += static_cast<float>(mi);
      }
    }
    model.offsets.push_back(model.features.size());
    model.mi_sums.push_back(sum);
  }
  return model;
}

}  // namespace simkit::disco
