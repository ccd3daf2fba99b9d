// DISCO on the CPU: MI (formula 3.7) and Lin similarity (3.8) against a plain float64
// computation written here from the formulas (no code shared with simkit's), on
// hand-made and random corpora; the model file's round trip and refusals.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <tuple>


#include "sealed_file.hpp"
#include "disco/key_counts.hpp"
#include "disco_fixture.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/threads.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// The references' words: ASCII letters, lower-cased, a sentence a line.
std::vector<std::vector<std::string>> sentences(const std::string& text) {
  std::vector<std::vector<std::string>> out(1);
  std::string word;
  for (const char c : text + "\n") {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (!word.empty()) out.back().push_back(word);
    word.clear();
    if (c == '\n') out.emplace_back();
  }
  return out;
}

// The reference: ASCII words (letters only, lower-cased) of each line; stop words keep
// their positions but are never paired.
struct Reference {
  std::map<std::tuple<std::string, int, std::string>, double> triple;
  std::map<std::pair<std::string, int>, double> row, column;
  std::map<int, double> total;
  std::map<std::string, std::map<std::pair<int, std::string>, double>> features;  // MI > 0

  Reference(const std::string& text, int window, const std::set<std::string>& stop) {
    for (const std::vector<std::string>& words : sentences(text))
      for (std::size_t i = 0; i < words.size(); ++i)
        for (std::size_t j = 0; j < words.size(); ++j) {
          const int r = static_cast<int>(j) - static_cast<int>(i);
          if (r == 0 || std::abs(r) >= window || stop.count(words[i]) || stop.count(words[j])) continue;
          triple[{words[i], r, words[j]}] += 1;
          row[{words[i], r}] += 1;
          column[{words[j], r}] += 1;
          total[r] += 1;
        }
    for (const auto& [key, count] : triple) {
      const auto& [w1, r, w2] = key;
      const double mi = std::log(count * total[r] / (row[{w1, r}] * column[{w2, r}]));
      if (mi > 0) features[w1][{r, w2}] = mi;
    }
  }

  double lin(const std::string& a, const std::string& b) {
    double shared = 0, sa = 0, sb = 0;
    for (const auto& [f, mi] : features[a]) {
      sa += mi;
      if (const auto it = features[b].find(f); it != features[b].end()) shared += mi + it->second;
    }
    for (const auto& [f, mi] : features[b]) sb += mi;
    return sa + sb > 0 ? shared / (sa + sb) : 0;
  }
};

// The model's features of word i as (relation, word) -> MI; needs every word in the model.
std::map<std::pair<int, std::string>, double> features_of(const disco::Model& m, std::size_t i) {
  std::map<std::pair<int, std::string>, double> out;
  const int relations = m.relations();
  for (std::uint64_t f = m.offsets[i]; f < m.offsets[i + 1]; ++f) {
    const int slot = static_cast<int>(m.features[f] % relations);
    const int r = slot < m.window - 1 ? slot - (m.window - 1) : slot - (m.window - 2);
    out[{r, m.words.at(m.features[f] / relations)}] = m.mi[f];
  }
  return out;
}

void expect_matches_reference(const std::string& text, int window, const std::string& stop_file,
                              const std::set<std::string>& stop) {
  test::TempDir dir;
  test::write_file(dir / "corpus.txt", text);
  disco::BuildOptions options;
  options.window = window;
  options.stopwords = stop_file;
  const disco::Model model = disco::build({(dir / "corpus.txt").string()}, options);
  Reference ref(text, window, stop);
  for (std::size_t i = 0; i < model.size(); ++i) {
    const auto got = features_of(model, i);
    const auto& want = ref.features[model.words[i]];
    ASSERT_EQ(got.size(), want.size()) << model.words[i];
    for (const auto& [f, mi] : want) {
      ASSERT_TRUE(got.count(f)) << model.words[i] << " lacks (" << f.first << ", " << f.second << ")";
      EXPECT_NEAR(got.at(f), mi, 1e-6 * std::max(1.0, mi)) << model.words[i];
    }
  }
  for (std::size_t a = 0; a < model.size(); ++a)
    for (std::size_t b = 0; b < model.size(); ++b)
      EXPECT_NEAR(disco::similarity(model, a, b), ref.lin(model.words[a], model.words[b]), 1e-6)
          << model.words[a] << " ~ " << model.words[b];
}

TEST(Disco, HandMadeCorpusEqualsTheFormulas) {
  const std::string text =
      "The cat drinks milk. The dog drinks water.\n"
      "A cat eats fish; a dog eats meat and the cat sleeps.\n"
      "Dogs and cats drink milk, water and tea.\n"
      "\n"
      "milk tea water milk tea water fish meat\n";
  expect_matches_reference(text, 4, "none", {});
  test::TempDir dir;
  test::write_file(dir / "stop.txt", "the\na\r\nand\n");
  expect_matches_reference(text, 4, (dir / "stop.txt").string(), {"the", "a", "and"});
  expect_matches_reference(text, 2, "none", {});
  expect_matches_reference(text, 6, (dir / "stop.txt").string(), {"the", "a", "and"});
}

TEST(Disco, RandomCorporaEqualTheFormulas) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::vector<std::string> vocabulary = {"ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st", "uv", "wx"};
  for (int trial = 0; trial < 4; ++trial) {
    std::string text;
    for (int line = 0; line < 60; ++line) {
      const int n = random.integer(0, 14);
      for (int i = 0; i < n; ++i)  // Zipf-like: low indices more often
        text += vocabulary[std::min(random.integer(0, 11), random.integer(0, 11))] + (i + 1 < n ? " " : "");
      text += "\n";
    }
    test::TempDir dir;
    test::write_file(dir / "stop.txt", "cd\n");
    expect_matches_reference(text, 2 + trial, trial % 2 ? "none" : (dir / "stop.txt").string(),
                             trial % 2 ? std::set<std::string>{} : std::set<std::string>{"cd"});
  }
}

TEST(Disco, TopWordsKeepTheirMi) {
  const std::string text = "red apple sweet apple red cherry sweet cherry green apple sour lemon\n"
                           "red wine sweet wine green tea sour grape red grape sweet tea\n";
  test::TempDir dir;
  test::write_file(dir / "c.txt", text);
  disco::BuildOptions all;
  all.stopwords = "none";
  const disco::Model full = disco::build({(dir / "c.txt").string()}, all);
  disco::BuildOptions top = all;
  top.words = 3;
  const disco::Model small = disco::build({(dir / "c.txt").string()}, top);
  ASSERT_EQ(small.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(small.words[i], full.words[i]);
    EXPECT_EQ(std::vector<std::uint32_t>(small.features.begin() + small.offsets[i], small.features.begin() + small.offsets[i + 1]),
              std::vector<std::uint32_t>(full.features.begin() + full.offsets[i], full.features.begin() + full.offsets[i + 1]));
  }
  EXPECT_TRUE(std::is_sorted(full.counts.rbegin(), full.counts.rend()));  // most frequent first
  const auto near = disco::most_similar(full, *full.find("apple"), 3);
  ASSERT_EQ(near.size(), 3u);
  EXPECT_GE(near[0].score, near[1].score);
  EXPECT_GE(near[1].score, near[2].score);
  for (const auto& n : near) EXPECT_NEAR(n.score, disco::similarity(full, *full.find("apple"), n.word), 0);
}

TEST(Disco, ModelFileRoundTripAndDamage) {
  test::TempDir dir;
  test::write_file(dir / "c.txt", "one two three two one four five\nthree four five six one two\n");
  disco::BuildOptions options;
  options.stopwords = "none";
  const disco::Model model = disco::build({(dir / "c.txt").string()}, options);
  const std::string path = (dir / "m.skd").string();
  disco::write_model(model, path);
  const disco::Model back = disco::read_model(path);
  EXPECT_EQ(back.words, model.words);
  EXPECT_EQ(back.counts, model.counts);
  EXPECT_EQ(back.features, model.features);
  EXPECT_EQ(back.mi, model.mi);
  EXPECT_EQ(back.mi_sums, model.mi_sums);
  const std::string bytes = test::read_file(path);
  const auto refusal = [](const std::string& b) {
    return test::input_error_of([&] { disco::parse_model(b, "m"); });
  };

  EXPECT_NE(refusal(bytes.substr(0, bytes.size() - 1)).find("truncated"), std::string::npos);
  EXPECT_NE(refusal(bytes.substr(0, 20)).find("truncated"), std::string::npos);
  std::string damaged = bytes;
  damaged[bytes.size() / 2] ^= 1;
  EXPECT_NE(refusal(damaged).find("checksum mismatch"), std::string::npos);
  EXPECT_NE(refusal(std::string(200, 'x')).find("wrong magic"), std::string::npos);

  // Version 3 (one XXH3-64 of every byte, before the checksum in pieces) is still read;
  // its own rule is checked: the pieces' sum under version 3 is refused.
  const disco::Model old = disco::parse_model(test::with_version(bytes, 3, false), "v3");
  EXPECT_EQ(old.words, model.words);
  EXPECT_EQ(old.mi, model.mi);
  EXPECT_NE(refusal(test::with_version(bytes, 3, true)).find("checksum mismatch"), std::string::npos);
}

TEST(Disco, KeyCountsSpillAndMergeExactly) {
  // More distinct keys than the smallest budget holds (1 MiB: 65,536 pairs), in batches:
  // the counts spill to temporary files and come back merged, in order, equal to a map's.
  test::Random random;
  SCOPED_TRACE(random.seed());
  disco::KeyCounts counts(1);
  std::map<std::uint64_t, std::uint64_t> want;
  std::vector<std::uint64_t> batch;
  for (int b = 0; b < 12; ++b) {
    for (int i = 0; i < 40000; ++i) {
      const std::uint64_t key = static_cast<std::uint64_t>(random.integer(0, 150000)) << 20 | random.integer(0, 3);
      batch.push_back(key);
      ++want[key];
    }
    counts.add(batch);
    EXPECT_TRUE(batch.empty());
  }
  EXPECT_GT(counts.spills(), 1u);
  auto next = want.begin();
  std::size_t seen = 0;
  counts.for_each([&](std::uint64_t key, std::uint64_t count) {
    ASSERT_NE(next, want.end());
    EXPECT_EQ(key, next->first);
    EXPECT_EQ(count, next->second);
    ++next;
    ++seen;
  });
  EXPECT_EQ(seen, want.size());
}

TEST(Disco, KeyCountsPartitionsCountExactly) {
  // Keys split into partitions at bounds: batches from several "threads" and counted runs
  // (another rank's) come out per partition (each within its range, ascending) and in all,
  // equal to a map's; a partition without keys is empty.
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::vector<std::uint64_t> bounds = {std::uint64_t{10} << 32, std::uint64_t{11} << 32,
                                             std::uint64_t{11} << 32 | 5, std::uint64_t{40} << 32};
  disco::KeyCounts counts(std::size_t{64} << 20, bounds);
  ASSERT_EQ(counts.partitions(), 5u);
  std::map<std::uint64_t, std::uint64_t> want;
  const auto key = [&] {
    const std::uint64_t word = static_cast<std::uint64_t>(random.integer(0, 60));
    return word == 10 || word == 39 ? word << 32 | 7 : word << 32 | random.integer(0, 9);  // partition 1, 3 sparse
  };
  for (int round = 0; round < 3; ++round) {
    std::vector<std::vector<std::uint64_t>> batches(4);
    std::vector<std::vector<std::uint64_t>*> pointers;
    for (auto& batch : batches) {
      for (int i = 0; i < random.integer(0, 3000); ++i) {
        batch.push_back(key());
        ++want[batch.back()];
      }
      pointers.push_back(&batch);
    }
    counts.add(pointers);
    std::map<std::uint64_t, std::uint64_t> counted;
    for (int i = 0; i < 500; ++i) counted[key()] += static_cast<std::uint64_t>(random.integer(1, 5));
    for (const auto& [k, c] : counted) want[k] += c;
    counts.add_counted({counted.begin(), counted.end()});
  }
  ASSERT_EQ(counts.spills(), 0u);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> got;
  for (std::size_t p = 0; p < counts.partitions(); ++p) {
    const std::uint64_t low = p == 0 ? 0 : bounds[p - 1], high = p < bounds.size() ? bounds[p] : ~std::uint64_t{0};
    counts.for_each_in(p, [&](std::uint64_t k, std::uint64_t c) {
      EXPECT_GE(k, low);
      EXPECT_LT(k, high);
      if (!got.empty()) {
        EXPECT_LT(got.back().first, k);
      }
      got.emplace_back(k, c);
    });
  }
  EXPECT_EQ(got, (std::vector<std::pair<std::uint64_t, std::uint64_t>>(want.begin(), want.end())));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> all;
  counts.for_each([&](std::uint64_t k, std::uint64_t c) { all.emplace_back(k, c); });
  EXPECT_EQ(all, got);
}

TEST(Disco, KeyCountsFoldWeightedSlots) {
  // With fold weights (R = 3), a key's low 32 bits l count as l - l % 3 with weight
  // fold[l % 3]: equal to a map of the folded keys' weighted counts; counted runs as given.
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::vector<std::uint64_t> fold = {3, 2, 1};
  disco::KeyCounts counts(std::size_t{64} << 20, {std::uint64_t{5} << 32}, fold);
  std::map<std::uint64_t, std::uint64_t> want;
  std::vector<std::uint64_t> batch;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t word = static_cast<std::uint64_t>(random.integer(0, 9)),
                        low = static_cast<std::uint64_t>(random.integer(0, 29));
    batch.push_back(word << 32 | low);
    want[word << 32 | (low - low % 3)] += fold[low % 3];
  }
  counts.add(batch);
  counts.add_counted({{std::uint64_t{7} << 32 | 3, 100}});
  want[std::uint64_t{7} << 32 | 3] += 100;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> got;
  counts.for_each([&](std::uint64_t k, std::uint64_t c) { got.emplace_back(k, c); });
  EXPECT_EQ(got, (std::vector<std::pair<std::uint64_t, std::uint64_t>>(want.begin(), want.end())));
}

TEST(Disco, PiecesAndSpillsCountExactly) {
  // A corpus of several pieces whose triples outgrow a tiny budget (spilled to temporary
  // files and merged) gives the model counted in one go; split in two files, one of them
  // gzip-compressed, the same.
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 3000; ++i) vocabulary.push_back("w" + std::to_string(i));
  std::string text;
  while (text.size() < (std::size_t{3} << 20)) {
    const int n = random.integer(1, 20);
    for (int i = 0; i < n; ++i)
      text += vocabulary[std::min(random.integer(0, 2999), random.integer(0, 2999))] + (i + 1 < n ? " " : "\n");
  }
  test::TempDir dir;
  test::write_file(dir / "c.txt", text);
  disco::BuildOptions options;
  options.stopwords = "none";
  options.words = 500;
  const disco::Model whole = disco::build({(dir / "c.txt").string()}, options);
  EXPECT_EQ(whole.size(), 500u);
  options.memory_budget = 1;  // the floors: 1 MiB pieces, 1 MiB of counts
  test::expect_same_model(disco::build({(dir / "c.txt").string()}, options), whole);
  const std::size_t cut = text.find('\n', text.size() / 2) + 1;
  test::write_file(dir / "a.txt", text.substr(0, cut));
  test::write_file(dir / "b.txt.gz", test::gzip(text.substr(cut)));
  options.memory_budget = 0;
  test::expect_same_model(disco::build({(dir / "a.txt").string(), (dir / "b.txt.gz").string()}, options), whole);
}

TEST(Disco, WikipediaDumpsCountTheirArticlesText) {
  const std::string dump = R"(<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
<page><title>Cats</title><ns>0</ns><id>1</id><revision><id>5</id><text xml:space="preserve">'''Cats''' drink [[milk|fresh milk]] and eat fish.{{Taxobox|x=y}}
== Food ==
Cats eat [[fish]]; dogs eat meat.&lt;ref&gt;cite dogs eat&lt;/ref&gt;</text></revision></page>
<page><title>Talk:Cats</title><ns>1</ns><id>2</id><revision><id>6</id><text>talk cats talk dogs</text></revision></page>
<page><title>Kitty</title><ns>0</ns><id>3</id><redirect title="Cats"/><revision><id>7</id><text>#REDIRECT [[Cats]]</text></revision></page>
</mediawiki>
)";
  const std::string text = "Cats drink fresh milk and eat fish.\nFood\nCats eat fish; dogs eat meat.\n";
  test::TempDir dir;
  test::write_file(dir / "dump.xml", dump);
  test::write_file(dir / "text.txt", text);
  disco::BuildOptions options;
  options.stopwords = "none";
  const disco::Model from_dump = disco::build({(dir / "dump.xml").string()}, options);
  test::expect_same_model(from_dump, disco::build({(dir / "text.txt").string()}, options));
  EXPECT_FALSE(from_dump.find("talk").has_value());
  EXPECT_FALSE(from_dump.find("redirect").has_value());
  EXPECT_FALSE(from_dump.find("cite").has_value());
}

TEST(Disco, RefusesBadText) {
  test::TempDir dir;
  test::write_file(dir / "bad.txt", "fine words\nbad \xff here\n");
  const std::string error = test::input_error_of([&] { disco::build({(dir / "bad.txt").string()}, {}); });
  EXPECT_NE(error.find("bad.txt:2:5: not valid UTF-8"), std::string::npos) << error;
  disco::BuildOptions options;
  options.window = 1;
  EXPECT_THROW(disco::build({(dir / "bad.txt").string()}, options), UsageError);
}

}  // namespace
}  // namespace simkit

namespace simkit {
namespace {

using test::sample_model;

// Each list's scores equal the formula for the words listed (float rounding apart), are
// in order, and no word left out scores clearly higher than the last one kept.
void expect_true_top_k(const disco::Model& model, const TopKLists& lists, double tolerance) {
  ASSERT_EQ(lists.rows, model.size());
  for (std::size_t w = 0; w < model.size(); ++w) {
    std::vector<double> exact(model.size());
    for (std::size_t o = 0; o < model.size(); ++o) exact[o] = o == w ? -1 : disco::similarity(model, w, o);
    std::vector<double> sorted = exact;
    std::sort(sorted.rbegin(), sorted.rend());
    for (std::size_t r = 0; r < lists.k; ++r) {
      const std::uint32_t o = lists.row_indices(w)[r];
      ASSERT_NE(o, w);
      ASSERT_LT(o, model.size());
      EXPECT_NEAR(lists.row_scores(w)[r], exact[o], tolerance) << model.words[w] << " rank " << r;
      EXPECT_NEAR(lists.row_scores(w)[r], sorted[r], tolerance) << model.words[w] << " rank " << r;
    }
  }
}

TEST(DiscoAllPairs, DenseAndSparseEqualTheFormula) {
  const disco::Model model = sample_model(test::quick() ? 150 : 400);
  disco::AllPairsOptions options;
  options.k = 8;
  options.form = disco::Form::sparse;
  const TopKLists sparse = disco::all_pairs(model, options);
  expect_true_top_k(model, sparse, 1e-6);
  options.form = disco::Form::dense;  // every feature: the same scores
  const TopKLists dense = disco::all_pairs(model, options);
  expect_true_top_k(model, dense, 1e-5);
  for (std::size_t i = 0; i < dense.scores.size(); ++i) EXPECT_NEAR(dense.scores[i], sparse.scores[i], 1e-5);
}

// The dense form's columns (counted on all cores) against a plain count: features by the
// words having them, most first, ties by lower id; all of them, or the first F.
TEST(DiscoAllPairs, DenseColumnsAreTheMostCommonFeatures) {
  const disco::Model model = sample_model(300);
  std::map<std::uint32_t, std::size_t> having;
  for (const std::uint32_t f : model.features) ++having[f];
  std::vector<std::pair<std::uint32_t, std::size_t>> order(having.begin(), having.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::uint32_t> want;
  for (const auto& [f, n] : order) want.push_back(f);
  EXPECT_EQ(disco::dense_columns(model, 0), want);
  want.resize(std::min<std::size_t>(want.size(), 77));
  EXPECT_EQ(disco::dense_columns(model, 77), want);
  // Ids far apart (counted by sorting, not by a counter an id): the same choice, scaled.
  disco::Model spread = model;
  for (std::uint32_t& f : spread.features) f *= 9973;
  std::vector<std::uint32_t> scaled = want;
  for (std::uint32_t& f : scaled) f *= 9973;
  EXPECT_EQ(disco::dense_columns(spread, 77), scaled);
  // Ids past a million but not far apart (a shared counter an id): the same choice, shifted.
  disco::Model shifted = model;
  for (std::uint32_t& f : shifted.features) f += 1u << 20;
  for (std::uint32_t& f : want) f += 1u << 20;
  EXPECT_EQ(disco::dense_columns(shifted, 77), want);
}

// Rows made ahead (prepare_rows, as the command line does while its GPU starts) and rows
// whose feature ids are too far apart for a lookup table give the same lists.
TEST(DiscoAllPairs, PreparedRowsAndFarApartIdsGiveTheSameLists) {
  const disco::Model model = sample_model(test::quick() ? 150 : 300);
  disco::AllPairsOptions options;
  options.k = 6;
  options.features = 120;
  const TopKLists plain = disco::all_pairs(model, options);
  const auto prepared = disco::prepare_rows(model, options, true);
  ASSERT_NE(prepared, nullptr);
  EXPECT_EQ(disco::columns_of(*prepared), 120u);
  const TopKLists ahead = disco::all_pairs(model, options, nullptr, nullptr, prepared.get());
  EXPECT_EQ(ahead.indices, plain.indices);
  EXPECT_EQ(ahead.scores, plain.scores);
  disco::AllPairsOptions other = options;  // rows made for other columns are not used
  other.features = 60;
  EXPECT_EQ(disco::all_pairs(model, other, nullptr, nullptr, prepared.get()).indices, disco::all_pairs(model, other).indices);
  disco::Model spread = model;  // ids past 2^24: looked up by binary search
  for (std::uint32_t& f : spread.features) f = f * 9973 + (1u << 24);
  const TopKLists far = disco::all_pairs(spread, options);
  EXPECT_EQ(far.indices, plain.indices);
  EXPECT_EQ(far.scores, plain.scores);
  options.form = disco::Form::sparse;
  EXPECT_EQ(disco::prepare_rows(model, options, true), nullptr);
}

TEST(DiscoAllPairs, ReducedColumnsEqualAReducedModel) {
  const disco::Model model = sample_model(200);
  const std::vector<std::uint32_t> columns = disco::dense_columns(model, 300);
  ASSERT_EQ(columns.size(), 300u);
  // The same model with only those features, scored by the sparse formula.
  disco::Model reduced = model;
  reduced.features.clear();
  reduced.mi.clear();
  reduced.offsets = {0};
  reduced.mi_sums.clear();
  const std::set<std::uint32_t> keep(columns.begin(), columns.end());
  for (std::size_t w = 0; w < model.size(); ++w) {
    double sum = 0;
    for (std::uint64_t i = model.offsets[w]; i < model.offsets[w + 1]; ++i)
      if (keep.count(model.features[i])) {
        reduced.features.push_back(model.features[i]);
        reduced.mi.push_back(model.mi[i]);
        sum += model.mi[i];
      }
    reduced.offsets.push_back(reduced.features.size());
    reduced.mi_sums.push_back(sum);
  }
  disco::AllPairsOptions options;
  options.k = 5;
  options.features = 300;
  expect_true_top_k(reduced, disco::all_pairs(model, options), 1e-5);
}

}  // namespace
}  // namespace simkit

namespace simkit {
namespace {

TEST(DiscoAllPairs, AStoredDenseFormGivesTheSameLists) {
  disco::Model model = sample_model(200);
  disco::Model plain = model;
  disco::make_dense(model, 300);
  ASSERT_EQ(model.dense_features, disco::dense_columns(plain, 300));
  ASSERT_EQ(model.dense.size(), model.size() * 300);
  // Each dense value is the word's MI for that column's feature, 0 when it lacks it.
  for (std::size_t w = 0; w < model.size(); w += 7)
    for (std::size_t c = 0; c < 300; ++c) {
      float want = 0;
      for (std::uint64_t i = model.offsets[w]; i < model.offsets[w + 1]; ++i)
        if (model.features[i] == model.dense_features[c]) want = model.mi[i];
      ASSERT_EQ(model.dense[w * 300 + c], want) << w << " " << c;
    }
  test::TempDir dir;
  disco::write_model(model, (dir / "m.skd").string());
  const disco::Model back = disco::read_model((dir / "m.skd").string());
  EXPECT_EQ(back.dense_features, model.dense_features);
  EXPECT_EQ(back.dense, model.dense);
  disco::AllPairsOptions options;
  options.k = 6;
  options.features = 300;
  const TopKLists computed = disco::all_pairs(plain, options);
  options.features = 0;  // the stored form's columns
  const TopKLists stored = disco::all_pairs(back, options);
  EXPECT_EQ(stored.indices, computed.indices);
  EXPECT_EQ(stored.scores, computed.scores);
  disco::make_dense(model, 0);
  EXPECT_TRUE(model.dense.empty() && model.dense_features.empty());
}

TEST(DiscoAllPairs, NoFeaturesScoreZero) {
  test::TempDir dir;
  test::write_file(dir / "c.txt", "apple\nbanana\ncherry\n");  // no word has a neighbour
  const disco::Model model = disco::build({(dir / "c.txt").string()}, {});
  ASSERT_EQ(model.size(), 3u);
  EXPECT_TRUE(model.features.empty());
  disco::AllPairsOptions options;
  options.k = 1;
  const TopKLists dense = disco::all_pairs(model, options);
  options.form = disco::Form::sparse;
  const TopKLists sparse = disco::all_pairs(model, options);
  EXPECT_EQ(dense.scores, sparse.scores);
  EXPECT_EQ(dense.indices, sparse.indices);
  EXPECT_EQ(dense.row_scores(0)[0], 0.0f);
  EXPECT_EQ(dense.row_indices(0)[0], 1u);  // ties go to the lower index
}

}  // namespace
}  // namespace simkit

// PPMI (measure ppmi) against a float64 computation written here from its definition:
// #(w, c) over every pair of words at distance 1 .. window - 1 of a sentence (weighted
// window - d with distance weights), #(w) and #(c) its row and column sums,
// PPMI = max(0, ln(#(w,c) x sum_c' #(c')^alpha / (#(w) x #(c)^alpha)) - ln k); cosine.
namespace simkit {
namespace {

struct PpmiReference {
  std::map<std::string, std::map<std::string, double>> features;  // PPMI > 0

  PpmiReference(const std::string& text, int window, bool weighted, double alpha, double shift,
                const std::set<std::string>& stop) {
    std::map<std::pair<std::string, std::string>, double> pair;
    std::map<std::string, double> row, column;
    for (const std::vector<std::string>& words : sentences(text))
      for (std::size_t i = 0; i < words.size(); ++i)
        for (std::size_t j = 0; j < words.size(); ++j) {
          const int d = std::abs(static_cast<int>(j) - static_cast<int>(i));
          if (d == 0 || d >= window || stop.count(words[i]) || stop.count(words[j])) continue;
          const double weight = weighted ? window - d : 1;
          pair[{words[i], words[j]}] += weight;
          row[words[i]] += weight;
          column[words[j]] += weight;
        }
    double smoothed = 0;
    for (const auto& [c, n] : column) smoothed += std::pow(n, alpha);
    for (const auto& [key, n] : pair) {
      const double pmi = std::log(n * smoothed / (row[key.first] * std::pow(column[key.second], alpha))) - std::log(shift);
      if (pmi > 0) features[key.first][key.second] = pmi;
    }
  }

  double cosine(const std::string& a, const std::string& b) {
    double dot = 0, na = 0, nb = 0;
    for (const auto& [c, x] : features[a]) {
      na += x * x;
      if (const auto it = features[b].find(c); it != features[b].end()) dot += x * it->second;
    }
    for (const auto& [c, x] : features[b]) nb += x * x;
    return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0;
  }
};

void expect_ppmi_matches_reference(const std::string& text, const disco::BuildOptions& options,
                                   const std::set<std::string>& stop) {
  test::TempDir dir;
  test::write_file(dir / "corpus.txt", text);
  const disco::Model model = disco::build({(dir / "corpus.txt").string()}, options);
  ASSERT_EQ(model.measure, disco::Measure::ppmi);
  ASSERT_EQ(model.relations(), 1);
  PpmiReference ref(text, options.window, options.ppmi.weighted, options.ppmi.alpha, options.ppmi.shift, stop);
  for (std::size_t i = 0; i < model.size(); ++i) {
    std::map<std::string, double> got;
    for (std::uint64_t f = model.offsets[i]; f < model.offsets[i + 1]; ++f) got[model.words.at(model.features[f])] = model.mi[f];
    const auto& want = ref.features[model.words[i]];
    ASSERT_EQ(got.size(), want.size()) << model.words[i];
    for (const auto& [c, ppmi] : want) {
      ASSERT_TRUE(got.count(c)) << model.words[i] << " lacks " << c;
      EXPECT_NEAR(got.at(c), ppmi, 1e-6 * std::max(1.0, ppmi)) << model.words[i] << " ~ " << c;
    }
  }
  for (std::size_t a = 0; a < model.size(); ++a)
    for (std::size_t b = 0; b < model.size(); ++b)
      EXPECT_NEAR(disco::similarity(model, a, b), ref.cosine(model.words[a], model.words[b]), 1e-6)
          << model.words[a] << " ~ " << model.words[b];
}

TEST(DiscoPpmi, HandMadeAndRandomCorporaEqualTheDefinition) {
  const std::string hand = "The cat drinks milk. The dog drinks water.\n"
                           "A cat eats fish; a dog eats meat and the cat sleeps.\n"
                           "Dogs and cats drink milk, water and tea.\n\nmilk tea water milk tea water fish meat\n";
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::vector<std::string> vocabulary = {"ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st"};
  std::string noise;
  for (int line = 0; line < 60; ++line) {
    const int n = random.integer(0, 14);
    for (int i = 0; i < n; ++i)
      noise += vocabulary[std::min(random.integer(0, 9), random.integer(0, 9))] + (i + 1 < n ? " " : "");
    noise += "\n";
  }
  test::TempDir dir;
  test::write_file(dir / "stop.txt", "the\na\nand\ncd\n");
  int trial = 0;
  for (const std::string& text : {hand, noise})
    for (const int window : {2, 4, 6}) {
      disco::BuildOptions options;
      options.measure = disco::Measure::ppmi;
      options.window = window;
      options.ppmi.weighted = trial % 2 == 1;
      options.ppmi.alpha = trial % 3 == 0 ? 0.75 : 1.0;
      options.ppmi.shift = trial % 4 == 3 ? 2.0 : 1.0;
      const bool stop = trial % 5 == 2;
      options.stopwords = stop ? (dir / "stop.txt").string() : "";  // "": ppmi's default, none
      SCOPED_TRACE(testing::Message() << "window " << window << " weighted " << options.ppmi.weighted << " alpha "
                                      << options.ppmi.alpha << " shift " << options.ppmi.shift << " stop " << stop);
      expect_ppmi_matches_reference(text, options, stop ? std::set<std::string>{"the", "a", "and", "cd"}
                                                        : std::set<std::string>{});
      ++trial;
    }
}

TEST(DiscoPpmi, ModelFilesKeepTheMeasureAndOldOnesReadAsLin) {
  const std::string text = "the red apple is sweet\nthe red cherry is sweet\na green apple is sour\n"
                           "sweet red wine and sour green tea\n";
  test::TempDir dir;
  test::write_file(dir / "c.txt", text);
  disco::BuildOptions options;
  options.measure = disco::Measure::ppmi;
  options.ppmi = {0.5, 2.0, true};
  options.subsample = 0.25;
  options.features = 3;
  const disco::Model model = disco::build({(dir / "c.txt").string()}, options);
  disco::write_model(model, (dir / "m.skd").string());
  const disco::Model back = disco::read_model((dir / "m.skd").string());
  EXPECT_EQ(back.measure, disco::Measure::ppmi);
  EXPECT_EQ(back.ppmi.alpha, 0.5);
  EXPECT_EQ(back.ppmi.shift, 2.0);
  EXPECT_TRUE(back.ppmi.weighted);
  EXPECT_EQ(back.subsample, 0.25);
  EXPECT_EQ(back.features, model.features);
  EXPECT_EQ(back.mi, model.mi);
  EXPECT_EQ(back.norms, model.norms);
  EXPECT_EQ(back.dense, model.dense);
  // A version-2 file (simkit before the measure was stored; tests/disco/data/lin-v2.skd,
  // built from this text with --features 3) reads as the Lin model built now.
  disco::BuildOptions lin;
  lin.features = 3;
  const disco::Model now = disco::build({(dir / "c.txt").string()}, lin);
  const disco::Model old = disco::read_model((test::source_dir() / "tests/disco/data/lin-v2.skd").string());
  EXPECT_EQ(old.measure, disco::Measure::lin);
  EXPECT_EQ(old.words, now.words);
  EXPECT_EQ(old.features, now.features);
  EXPECT_EQ(old.mi, now.mi);
  EXPECT_EQ(old.dense, now.dense);
  // A measure section that names no measure, or parameters out of range, is refused
  // (checksum made right again: the structure check behind it must hold on its own).
  const std::string bytes = test::read_file(dir / "m.skd");
  const auto damaged = [&](std::size_t at, const void* value, std::size_t size) {
    std::string b = bytes;
    std::memcpy(b.data() + at, value, size);
    return test::input_error_of([&] { disco::parse_model(test::sealed(b, true), "m"); });
  };
  const std::size_t measure_at = bytes.size() - 8 - 32;  // the section sits just before the checksum
  const std::uint32_t unknown = 7;
  const double negative = -1;
  EXPECT_NE(damaged(measure_at, &unknown, 4).find("corrupt measure section"), std::string::npos);
  EXPECT_NE(damaged(measure_at + 8, &negative, 8).find("corrupt measure section"), std::string::npos);
  EXPECT_EQ(damaged(measure_at + 8, &options.ppmi.alpha, 8), "(accepted)");
}

TEST(DiscoPpmi, SubsamplingRepeatsOnAnyNumberOfThreads) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::string text;
  for (int line = 0; line < 3000; ++line) {
    const int n = random.integer(1, 12);
    for (int i = 0; i < n; ++i)
      text += "w" + std::to_string(std::min(random.integer(0, 199), random.integer(0, 199))) + (i + 1 < n ? " " : "\n");
  }
  test::TempDir dir;
  test::write_file(dir / "c.txt", text);
  disco::BuildOptions options;
  options.measure = disco::Measure::ppmi;
  options.subsample = 1e-3;
  const disco::Model all = disco::build({(dir / "c.txt").string()}, options);
  disco::Model one;
  {
    const ThreadLimit limit(1);
    one = disco::build({(dir / "c.txt").string()}, options);
  }
  EXPECT_EQ(all.features, one.features);
  EXPECT_EQ(all.mi, one.mi);
  options.seed = 2;
  const disco::Model other_seed = disco::build({(dir / "c.txt").string()}, options);
  EXPECT_NE(other_seed.mi, all.mi);
  options.subsample = 0;
  const disco::Model none = disco::build({(dir / "c.txt").string()}, options);
  EXPECT_NE(none.mi, all.mi);
  EXPECT_EQ(none.counts, all.counts);  // word counts are the whole corpus's either way
}

TEST(DiscoPpmi, AllPairsDenseAndSparseEqualTheCosine) {
  disco::BuildOptions build;
  build.measure = disco::Measure::ppmi;
  build.words = test::quick() ? 120 : 250;
  const disco::Model model =
      disco::build({(test::source_dir() / "data/samples/postings/brown-sample.txt").string()}, build);
  disco::AllPairsOptions options;
  options.k = 8;
  options.form = disco::Form::sparse;
  const TopKLists sparse = disco::all_pairs(model, options);
  expect_true_top_k(model, sparse, 1e-6);
  options.form = disco::Form::dense;
  const TopKLists dense = disco::all_pairs(model, options);
  expect_true_top_k(model, dense, 1e-5);
  // Reduced columns: the cosine over those columns only.
  options.features = 200;
  const std::vector<std::uint32_t> columns = disco::dense_columns(model, 200);
  const std::set<std::uint32_t> keep(columns.begin(), columns.end());
  disco::Model reduced = model;
  reduced.features.clear();
  reduced.mi.clear();
  reduced.offsets = {0};
  for (std::size_t w = 0; w < model.size(); ++w) {
    for (std::uint64_t i = model.offsets[w]; i < model.offsets[w + 1]; ++i)
      if (keep.count(model.features[i])) {
        reduced.features.push_back(model.features[i]);
        reduced.mi.push_back(model.mi[i]);
      }
    reduced.offsets.push_back(reduced.features.size());
  }
  disco::compute_sums(reduced);
  expect_true_top_k(reduced, disco::all_pairs(model, options), 1e-5);
}

}  // namespace
}  // namespace simkit
