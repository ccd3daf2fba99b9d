// The edit-rate pipeline's promise (include/simkit/dedup.hpp, docs/dedup.md): every pair
// of documents within RateOptions::guaranteed_edits edits and below the rate is found,
// whatever the documents hold: plain text, prose, binary bytes, and the repetitive text
// (generated code, logs, boilerplate) that once slipped through the thesis's filter. And
// every pair printed is a true pair with its exact distance.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "dedup/edit_distance.hpp"
#include "dedup_fixture.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// The guarantee's signature (at the block size of the document's length).
ctph::RateSignature signature_of(const std::string& text, std::size_t target = 100) {
  return ctph::length_signature({reinterpret_cast<const unsigned char*>(text.data()), text.size()}, target);
}

// The two signatures of documents whose block sizes are equal or double, at the shared one.
std::pair<std::string, std::string> at_shared_block_size(const ctph::RateSignature& a, const ctph::RateSignature& b) {
  if (a.block_size == b.block_size) return {a.text, b.text};
  if (a.block_size * 2 == b.block_size) return {a.doubled, b.text};
  if (b.block_size * 2 == a.block_size) return {a.text, b.doubled};
  ADD_FAILURE() << "block sizes " << a.block_size << " and " << b.block_size << " share no signature";
  return {};
}

// Bytes of any value: what a binary file or an editor's stray key inserts.
char any_byte(std::mt19937_64& rng) { return static_cast<char>(rng() % 256); }

// A text whose rolling hash repeats every few bytes at a piece boundary of its block size,
// so that its signature has a character every few bytes: more than the signature kernels
// take. Found by search from a fixed start, the same on every machine.
std::string unsignable_text(std::size_t length) {
  for (std::uint32_t seed = 1;; ++seed) {
    std::mt19937_64 rng(seed);
    const std::string period = {static_cast<char>(rng() % 256), static_cast<char>(rng() % 256)};
    std::string text;
    while (text.size() < length) text += period;
    text.resize(length);
    if (signature_of(text).text.size() > dedup::kMaxPairString) return text;
  }
}

TEST(RateSignature, BlockSizeFollowsTheDocumentsLength) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (const std::size_t n : {0, 1, 100, 300, 301, 5000, 100000})
    for (const std::size_t target : {1, 20, 100, 320}) {
      std::string data(n, '\0');
      for (char& c : data) c = any_byte(random.engine());
      const ctph::RateSignature s = signature_of(data, target);
      EXPECT_GE(s.block_size * target, n);
      if (s.block_size > ctph::kMinBlockSize) { EXPECT_LT(s.block_size / 2 * target, n); }
      EXPECT_LE(s.doubled.size(), s.text.size());
      EXPECT_EQ(n == 0, s.text.empty());
      EXPECT_EQ(signature_of(data, target).text, s.text);
    }
}

// The bound behind the promise: d edits change at most kSignatureCharsPerEdit * d
// characters of the signatures at the block size two documents share.
TEST(RateSignature, EditsChangeFewCharactersAtASharedBlockSize) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> docs = test::sample_documents(random, test::quick() ? 60 : 400, 1, 20000);
  for (int i = 0; i < 40; ++i) {
    std::string bytes(static_cast<std::size_t>(random.integer(0, 5000)), '\0');
    for (char& c : bytes) c = any_byte(random.engine());
    docs.push_back(bytes);
  }
  for (const std::string& doc : docs)
    for (int edits = 1; edits <= 3; ++edits) {
      std::string copy = doc;
      test::apply_random_edits(copy, edits, random.engine(), any_byte);
      const auto [a, b] = at_shared_block_size(signature_of(doc), signature_of(copy));
      EXPECT_LE(dedup::edit_distance(a, b), ctph::kSignatureCharsPerEdit * edits) << doc.size() << " bytes";
    }
}

// The documents of `texts`, each beside a copy with 1 to 3 random edits, written to `dir`.
struct Planted {
  std::vector<std::string> files;
  std::vector<std::uint32_t> distances;  // of each planted pair
};
Planted plant(const test::TempDir& dir, const std::vector<std::string>& texts, test::Random& random) {
  Planted out;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::string copy = texts[i];
    test::apply_random_edits(copy, random.integer(1, 3), random.engine(), i % 2 ? any_byte : test::printable);
    out.files.push_back((dir / ("doc" + std::to_string(i))).string());
    out.files.push_back((dir / ("doc" + std::to_string(i) + "-edited")).string());
    test::write_file(out.files[out.files.size() - 2], texts[i]);
    test::write_file(out.files.back(), copy);
    out.distances.push_back(dedup::edit_distance(texts[i], copy));
  }
  return out;
}

// Every planted pair below the rate is found with its distance, and every pair found is a
// true pair (the brute force's, with the same distance).
void expect_all_planted_found(const Planted& planted, const std::vector<dedup::RateMatch>& got, double rate) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> found;
  for (const dedup::RateMatch& m : got) found.emplace(m.a, m.b);
  for (std::uint32_t i = 0; i < planted.distances.size(); ++i) {
    const std::size_t la = test::read_file(planted.files[2 * i]).size(), lb = test::read_file(planted.files[2 * i + 1]).size();
    if (dedup::below_rate(planted.distances[i], la, lb, rate)) {
      EXPECT_TRUE(found.count({2 * i, 2 * i + 1}))
          << "missed: " << planted.files[2 * i] << " (" << la << " bytes, " << planted.distances[i] << " edits)";
    }
  }
  const std::vector<dedup::RateMatch> all = test::pairs_below_rate(planted.files, rate);
  for (const dedup::RateMatch& m : got)
    EXPECT_NE(std::find(all.begin(), all.end(), m), all.end()) << "not a true pair: " << m.a << " " << m.b;
}

TEST(EditRate, FindsEveryPairWithinTheGuaranteedEdits) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir dir;
  std::vector<std::string> texts = test::sample_documents(random, test::quick() ? 40 : 160, 40, 12000);
  texts.push_back(unsignable_text(2000));
  const Planted planted = plant(dir, texts, random);
  for (const double rate : {0.05, 0.01}) {
    dedup::RateOptions options;
    options.rate = rate;
    const auto got = dedup::match_rates(planted.files, options);
    expect_all_planted_found(planted, got, rate);
  }
}

// The signatures of repetitive text alone: every document made up to repeat itself.
TEST(EditRate, FindsEveryPairOfRepetitiveDocuments) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir dir;
  std::vector<std::string> texts;
  for (int i = 0; i < (test::quick() ? 30 : 120); ++i)
    texts.push_back(test::repetitive_text(random, static_cast<std::size_t>(random.integer(100, 20000))));
  const Planted planted = plant(dir, texts, random);
  dedup::RateOptions options;
  options.rate = 0.05;
  expect_all_planted_found(planted, dedup::match_rates(planted.files, options), options.rate);
}

// The case that showed the miss: Boost's preprocessed function_operator_10.hpp (7,983
// bytes) and a copy with the space at offset 3872 made '#'. Its signature at the thesis's
// block size was one character, which one edit changes: a signature rate of 0.5.
TEST(EditRate, RegressionOneEditInAPreprocessedHeader) {
  const std::string text = test::read_file(test::source_dir() /
                                           "data/samples/boost/phoenix/function/detail/cpp03/preprocessed/function_operator_10.hpp");
  ASSERT_EQ(text.size(), 7983u);
  ASSERT_EQ(text[3872], ' ');
  std::string copy = text;
  copy[3872] = '#';
  const test::TempDir dir;
  const std::vector<std::string> files = {(dir / "a.hpp").string(), (dir / "b.hpp").string()};
  test::write_file(files[0], text);
  test::write_file(files[1], copy);
  dedup::RateOptions options;
  options.rate = 0.05;
  const auto got = dedup::match_rates(files, options);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].distance, 1u);
}

// A caller's GPUs are asked for once, when the documents are signed (here: none, the CPU).
TEST(EditRate, DevicesAreAskedForOnceTheDocumentsAreSigned) {
  test::Random random;
  const test::TempDir dir;
  const auto files = test::plant_near_duplicates(dir.path(), 20, random);
  dedup::RateOptions options;
  options.rate = 0.05;
  const auto want = dedup::match_rates(files, options);
  int asked = 0;
  options.devices_when_signed = [&] {
    ++asked;
    return std::vector<int>{};
  };
  dedup::RateStats stats;
  EXPECT_EQ(dedup::match_rates(files, options, &stats), want);
  EXPECT_EQ(asked, 1);
  EXPECT_GE(stats.device_wait_seconds, 0.0);
}

// A document too repetitive to sign at its length's block size is verified against every
// document of a fitting length (up to the guaranteed edits).
TEST(EditRate, UnsignableDocumentsMeetEveryDocument) {
  const test::TempDir dir;
  const std::string text = unsignable_text(3000);
  std::string near = text, shorter = text.substr(0, 2950), far = text.substr(0, 1000);
  near[1500] = 'x';
  std::vector<std::string> files;
  for (const auto& [name, bytes] : {std::pair{"a", text}, {"b", near}, {"c", shorter}, {"d", far}}) {
    files.push_back((dir / name).string());
    test::write_file(files.back(), bytes);
  }
  dedup::RateOptions options;
  options.rate = 0.05;
  dedup::RateStats stats;
  const auto got = dedup::match_rates(files, options, &stats);
  EXPECT_GE(stats.unsigned_documents, 2u);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0], (dedup::RateMatch{0, 1, 1, 1.0 / 6000}));  // a-b, one edit apart
  const auto all = test::pairs_below_rate(files, options.rate);  // a-b, a-c and b-c; d is too short for any
  ASSERT_EQ(all.size(), 3u);
  for (const dedup::RateMatch& m : got) EXPECT_NE(std::find(all.begin(), all.end(), m), all.end());
}

// Signature pairs pruned by the documents' lengths (the default) find the very pairs, and
// the very candidates, that scoring every pair of compatible block sizes finds, while
// scoring fewer: real headers with planted near-duplicates, documents of every length from
// 40 bytes to 12 KB and two empty ones, at rates whose windows are narrow and wide, with
// and without the guarantee, in runs of the default 64 rows and of 5 (many runs a group),
// the signatures scored in one set and in sets of at most 300 characters (many calls).
TEST(EditRate, PruningByLengthFindsWhatScoringEveryPairFinds) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir dir;
  std::vector<std::string> files = test::plant_near_duplicates(dir.path(), test::quick() ? 20 : 50, random);
  const std::vector<std::string> texts = test::sample_documents(random, test::quick() ? 120 : 250, 40, 12000);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    files.push_back((dir / ("text" + std::to_string(i))).string());
    test::write_file(files.back(), texts[i]);
  }
  for (const char* name : {"empty0", "empty1"}) {
    files.push_back((dir / name).string());
    test::write_file(files.back(), "");
  }
  for (const double rate : {0.03, 0.1})
    for (const std::uint32_t guaranteed : {3u, 0u}) {
      dedup::RateOptions options;
      options.rate = rate;
      options.guaranteed_edits = guaranteed;
      options.prune_by_length = false;
      dedup::RateStats every_stats;
      const auto every = dedup::match_rates(files, options, &every_stats);
      EXPECT_GT(every_stats.candidates, 0u);
      options.prune_by_length = true;
      std::uint64_t pruned_pairs = 0;
      // Runs of the default and of 5 rows; the signatures scored in one set, and in sets of
      // at most 300 characters (a call every meeting or two).
      for (const std::uint32_t run_rows : {0u, 5u})
        for (const std::size_t set_chars : {std::size_t{0}, std::size_t{300}}) {
          const std::string what = "rate " + std::to_string(rate) + ", guaranteed edits " + std::to_string(guaranteed) +
                                   ", runs of " + std::to_string(run_rows) + ", sets of " + std::to_string(set_chars);
          options.run_rows = run_rows;
          options.pair_set_chars = set_chars;
          dedup::RateStats stats;
          EXPECT_EQ(dedup::match_rates(files, options, &stats), every) << what;
          EXPECT_EQ(stats.candidates, every_stats.candidates) << what;
          EXPECT_LT(stats.signature_pairs, every_stats.signature_pairs) << what;
          if (set_chars == 0) pruned_pairs = stats.signature_pairs;
          else EXPECT_EQ(stats.signature_pairs, pruned_pairs) << what;
        }
    }
}

// Real headers and planted near-duplicates: found, and nothing above the rate; the same
// when verification reads the documents again.
TEST(EditRate, FindsEveryPlantedNearDuplicateAndNothingAbove) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir dir;
  const std::vector<std::string> files = test::plant_near_duplicates(dir.path(), test::quick() ? 20 : 60, random);
  dedup::RateOptions options;
  options.rate = 0.05;
  const auto got = dedup::match_rates(files, options);
  test::expect_planted_found(files, got, options.rate);
  options.memory_budget = 1;  // no document kept: verification reads them again
  EXPECT_EQ(dedup::match_rates(files, options), got);
}

// Long documents among short ones: the pairs of long ones are verified first, yet every
// pair comes out in document order with its exact distance, on the CPU as with GPUs.
TEST(EditRate, LongPairsAmongShortOnesComeOutInDocumentOrder) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir short_dir, long_dir;
  const std::vector<std::string> shorts = test::plant_near_duplicates(short_dir.path(), 8, random);
  const std::vector<std::string> longs = test::plant_near_duplicates(long_dir.path(), 4, random, 33000, 40000);
  // Pairs (2i, 2i + 1) as expect_planted_found reads them, long and short in turn.
  std::vector<std::string> files;
  for (std::size_t i = 0; i < shorts.size(); i += 2) {
    if (i < longs.size()) files.insert(files.end(), {longs[i], longs[i + 1]});
    files.insert(files.end(), {shorts[i], shorts[i + 1]});
  }
  dedup::RateOptions options;
  options.rate = 0.05;
  const auto got = dedup::match_rates(files, options);
  test::expect_planted_found(files, got, options.rate);
}

}  // namespace
}  // namespace simkit
