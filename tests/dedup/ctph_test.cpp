// CTPH signatures and scores against libfuzzy 2.14.1 (Debian libfuzzy-dev, the test
// peer): on real files of every size found on a Debian machine, on generated edge
// cases, and on thousands of pairs, including planted near-duplicates.
#include <fuzzy.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dedup_fixture.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

std::string reference_hash(const Bytes& data) {
  char out[FUZZY_MAX_RESULT];
  EXPECT_EQ(fuzzy_hash_buf(data.data(), static_cast<std::uint32_t>(data.size()), out), 0);
  return out;
}

Bytes read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), {});
}

// Real data the repository ships, the same on every machine: every bundled sample file
// (C++ headers, prose, word vectors, CSV; hundreds of bytes to megabytes), then slices of
// the large ones from a few bytes to two megabytes, text cut anywhere, until `count`.
std::vector<Bytes> real_documents(std::size_t count, test::Random& random) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::recursive_directory_iterator(test::source_dir() / "data/samples"))
    if (entry.is_regular_file()) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  std::vector<Bytes> out, large;
  for (const fs::path& p : paths) {
    Bytes data = read_bytes(p);
    if (data.size() >= 100'000) large.push_back(data);
    if (out.size() < count) out.push_back(std::move(data));
  }
  while (out.size() < count && !large.empty()) {
    const Bytes& from = large[static_cast<std::size_t>(random.integer(0, static_cast<int>(large.size()) - 1))];
    const auto length = std::min<std::size_t>(from.size(), std::size_t{1} << random.integer(3, 21));
    const auto at = static_cast<std::size_t>(random.integer(0, static_cast<int>(from.size() - length)));
    out.emplace_back(from.begin() + static_cast<std::ptrdiff_t>(at), from.begin() + static_cast<std::ptrdiff_t>(at + length));
  }
  return out;
}

// Bytes that stress the block-size choice and the tail rules: empty, tiny, long runs,
// few distinct values, random, sizes around 64 * 3 * 2^n.
std::vector<Bytes> edge_cases(test::Random& random) {
  std::vector<Bytes> cases;
  for (std::size_t n : {0, 1, 2, 6, 7, 8, 63, 64, 65, 191, 192, 193, 383, 384, 385, 6143, 6144, 6145})
    for (int kind = 0; kind < 3; ++kind) {
      Bytes b(n);
      for (auto& c : b)
        c = kind == 0 ? 0 : kind == 1 ? static_cast<unsigned char>("ab \n"[random.integer(0, 3)])
                                      : static_cast<unsigned char>(random.integer(0, 255));
      cases.push_back(b);
    }
  for (std::size_t n : {std::size_t{100'000}, std::size_t{1'000'000}, std::size_t{3'000'001}}) {
    Bytes b(n);
    for (auto& c : b) c = static_cast<unsigned char>(random.integer(0, 255));
    cases.push_back(b);
  }
  return cases;
}

// A copy with a few random byte changes and insertions: a near-duplicate.
Bytes edited(const Bytes& original, test::Random& random) {
  Bytes b = original;
  const int edits = random.integer(1, 12);
  for (int e = 0; e < edits && !b.empty(); ++e) {
    const auto at = static_cast<std::size_t>(random.integer(0, static_cast<int>(b.size()) - 1));
    if (random.integer(0, 1) == 0)
      b[at] = static_cast<unsigned char>(random.integer(0, 255));
    else
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<unsigned char>(random.integer(0, 255)));
  }
  return b;
}

TEST(Ctph, SignaturesEqualLibfuzzyOnRealFiles) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const auto documents = real_documents(test::quick() ? 120 : 560, random);
  ASSERT_GE(documents.size(), test::quick() ? 100u : 500u);
  for (const Bytes& data : documents) ASSERT_EQ(ctph::hash(data), reference_hash(data)) << data.size() << " bytes";
}

TEST(Ctph, SignaturesEqualLibfuzzyOnEdgeCases) {
  test::Random random;
  for (const Bytes& data : edge_cases(random)) ASSERT_EQ(ctph::hash(data), reference_hash(data)) << data.size() << " bytes";
}

// The thesis's pieces at block size 3 * 2^level, byte by byte as ctph.hpp defines them
// (written plainly, apart from the library's one pass over several levels): a piece ends
// where the rolling hash plus one is a multiple of the block size, each piece is one
// base64 character of its FNV hash, and the open tail is a piece too.
std::string reference_pieces(const Bytes& data, std::uint32_t level) {
  static constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::uint64_t block = ctph::kMinBlockSize << level;
  ctph::RollingHash roll;
  std::uint32_t h = 0x28021967;
  std::string out;
  bool open = false;
  for (const unsigned char c : data) {
    const std::uint64_t value = roll.update(c);
    h = (h * 0x01000193) ^ c;
    open = true;
    if ((value + 1) % block == 0) {
      out += kBase64[h % 64];
      h = 0x28021967;
      open = false;
    }
  }
  if (open) out += kBase64[h % 64];
  return out;
}

ctph::RateSignature reference_signature(const Bytes& data, std::uint32_t level) {
  constexpr std::uint32_t kLevels = 31;
  ctph::RateSignature s;
  s.block_size = ctph::kMinBlockSize << level;
  s.text = reference_pieces(data, level);
  if (level + 1 < kLevels) s.doubled = reference_pieces(data, level + 1);
  return s;
}

void expect_signature(const ctph::RateSignature& got, const ctph::RateSignature& want, const std::string& what) {
  EXPECT_EQ(got.block_size, want.block_size) << what;
  EXPECT_EQ(got.text, want.text) << what;
  EXPECT_EQ(got.doubled, want.doubled) << what;
}

// The library's rate and length signatures of `data` at `length`, alone and from one
// pass, equal the plain reference.
void expect_rate_signatures(const Bytes& data, std::size_t length, const std::string& where) {
  const std::string what = where + ", length " + std::to_string(length);
  std::uint32_t rate_level = 0;
  while (rate_level + 1 < 31 && reference_pieces(data, rate_level).size() > length) ++rate_level;
  std::uint32_t length_level = 0;
  while (length_level + 1 < 31 && (ctph::kMinBlockSize << length_level) * length < data.size()) ++length_level;
  const ctph::RateSignature want_rate = reference_signature(data, rate_level);
  const ctph::RateSignature want_length = reference_signature(data, length_level);
  expect_signature(ctph::rate_signature(data, length), want_rate, what + ", rate");
  expect_signature(ctph::length_signature(data, length), want_length, what + ", by length");
  const auto [rate, by_length] = ctph::rate_and_length_signatures(data, length, length);
  expect_signature(rate, want_rate, what + ", rate from one pass");
  expect_signature(by_length, want_length, what + ", by length from one pass");
}

// The rate signature (the smallest level whose pieces are at most max_length) and the
// length signature (the smallest level with 3 * 2^level * target >= the length) equal the
// plain reference: real files and slices of them, generated edge cases, repetitive text.
TEST(Ctph, RateSignaturesEqualThePlainReference) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<Bytes> documents;
  for (Bytes& d : real_documents(test::quick() ? 40 : 120, random))
    if (d.size() <= 200'000) documents.push_back(std::move(d));
  for (Bytes& d : edge_cases(random))
    if (d.size() <= 200'000) documents.push_back(std::move(d));
  for (const std::size_t n : {std::size_t{5'000}, std::size_t{60'000}}) {
    Bytes repeated(n);  // a rate level far from the length's (the library's second pass)
    for (std::size_t k = 0; k < n; ++k) repeated[k] = static_cast<unsigned char>("abcab"[k % 5]);
    documents.push_back(std::move(repeated));
  }
  for (const Bytes& data : documents)
    for (const std::size_t length : {std::size_t{64}, std::size_t{20}})
      expect_rate_signatures(data, length, std::to_string(data.size()) + " bytes");
}

// The edit-rate pipeline's two signatures from one pass equal each computed alone: text
// of every size up to 300,000 bytes, and repetitive text whose rate level lies far from
// its length's (the second pass).
TEST(Ctph, RateAndLengthSignaturesTogetherEqualEachAlone) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int trial = 0; trial < (test::quick() ? 20 : 80); ++trial) {
    const auto size = static_cast<std::size_t>(random.integer(0, trial % 4 == 0 ? 300000 : 20000));
    std::vector<unsigned char> data(size);
    const int kind = trial % 3;  // random bytes, text-like letters, one short phrase repeated
    for (std::size_t k = 0; k < size; ++k)
      data[k] = kind == 0   ? static_cast<unsigned char>(random.integer(0, 255))
                : kind == 1 ? static_cast<unsigned char>('a' + random.integer(0, 25))
                            : static_cast<unsigned char>("abcab"[k % 5]);
    for (const std::size_t max_length : {std::size_t{100}, std::size_t{20}, std::size_t{320}})
      for (const std::size_t target : {max_length, std::size_t{64}}) {
        const auto [rate, by_length] = ctph::rate_and_length_signatures(data, max_length, target);
        const ctph::RateSignature want_rate = ctph::rate_signature(data, max_length);
        const ctph::RateSignature want_length = ctph::length_signature(data, target);
        ASSERT_EQ(rate.block_size, want_rate.block_size) << size << " bytes, kind " << kind;
        ASSERT_EQ(rate.text, want_rate.text);
        ASSERT_EQ(rate.doubled, want_rate.doubled);
        ASSERT_EQ(by_length.block_size, want_length.block_size);
        ASSERT_EQ(by_length.text, want_length.text);
        ASSERT_EQ(by_length.doubled, want_length.doubled);
      }
  }
}

// The one pass computes eight positions' rolling hashes side by side in blocks of 256,
// in 32 bits: a rolling hash of 2^32 - 1 (roll + 1 = 2^32, not a multiple of 3, which
// wraps to 0 there) ends no piece, and windows across the blocks' and segments' edges
// and the document's ends are the plain reference's.
TEST(Ctph, RateSignaturesAtTheRollingHashsLargestValueAndAtBlockEdges) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const Bytes window = {3, 31, 31, 31, 31, 9, 12};  // rolls to 2^32 - 1 at its last byte
  ctph::RollingHash roll;
  std::uint32_t value = 0;
  for (const unsigned char c : window) value = roll.update(c);
  ASSERT_EQ(value, 0xFFFFFFFFu);
  // (65,536 bytes: the pass sums its lanes' counts every 64 KiB.)
  for (const std::size_t size : {std::size_t{7}, std::size_t{300}, std::size_t{3000}, std::size_t{20'000},
                                 std::size_t{65'536}, std::size_t{65'537}, std::size_t{140'000}})
    for (const std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{248}, std::size_t{250}, std::size_t{253},
                                 std::size_t{256}, std::size_t{2040}, std::size_t{19'993}}) {
      if (at + window.size() > size) continue;
      Bytes data(size);
      for (auto& c : data) c = static_cast<unsigned char>(random.integer(0, 3) == 0 ? ' ' : 'a' + random.integer(0, 25));
      for (std::size_t copy = at; copy + window.size() <= size; copy += 509)  // the window again and again
        std::copy(window.begin(), window.end(), data.begin() + static_cast<std::ptrdiff_t>(copy));
      for (const std::size_t length : {std::size_t{1}, std::size_t{20}, std::size_t{64}, std::size_t{100}})
        expect_rate_signatures(data, length, std::to_string(size) + " bytes, the window at " + std::to_string(at));
    }
}

// A long document with few pieces at the smallest block sizes (text repeated where the
// rolling hash ends none, a few random bursts far apart, its last byte ending one): the
// pass's counts of those pieces and the end of the last one, summed over its 64 KiB
// segments, choose the rate level as the plain reference does, with the length limit at
// each small level's exact count.
TEST(Ctph, RateLevelsOfLongDocumentsWithFewSmallPieces) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const auto ends_a_piece = [](const Bytes& data) {
    ctph::RollingHash roll;
    std::uint64_t value = 0, ends = 0;
    for (const unsigned char c : data) {
      value = roll.update(c);
      ends += (value + 1) % ctph::kMinBlockSize == 0;
    }
    return std::pair{ends, (value + 1) % ctph::kMinBlockSize == 0};
  };
  Bytes unit;  // repeated, it ends no piece: the first such letter or pair of letters
  for (int code = 0; code < 26 * 27 && unit.empty(); ++code) {
    Bytes candidate = {static_cast<unsigned char>('a' + code % 26)};
    if (code >= 26) candidate.push_back(static_cast<unsigned char>('a' + code / 26 - 1));
    Bytes repeated;
    for (int k = 0; k < 200; ++k) repeated.insert(repeated.end(), candidate.begin(), candidate.end());
    if (ends_a_piece(repeated).first == 0) unit = candidate;
  }
  ASSERT_FALSE(unit.empty());
  for (int trial = 0; trial < 4; ++trial) {
    Bytes data;
    while (data.size() < 200'000) {
      if (random.integer(0, 2000) == 0)
        for (int k = 0; k < 12; ++k) data.push_back(static_cast<unsigned char>(random.integer(0, 255)));
      data.insert(data.end(), unit.begin(), unit.end());
    }
    while (!ends_a_piece(data).second) data.push_back(static_cast<unsigned char>(random.integer(0, 255)));
    for (std::uint32_t level = 0; level < 4; ++level)
      expect_rate_signatures(data, std::max<std::size_t>(reference_pieces(data, level).size(), 1),
                             std::to_string(data.size()) + " bytes, few pieces, level " + std::to_string(level));
  }
}

TEST(Ctph, PiecewiseUpdatesGiveTheSameSignature) {
  test::Random random;
  Bytes data(250'000);
  for (auto& c : data) c = static_cast<unsigned char>(random.integer(0, 255));
  ctph::Hasher hasher(data.size());
  for (std::size_t at = 0; at < data.size();) {
    const auto n = std::min<std::size_t>(data.size() - at, static_cast<std::size_t>(random.integer(0, 9000)));
    hasher.update(std::span(data).subspan(at, n));
    at += n;
  }
  EXPECT_EQ(hasher.digest(), ctph::hash(data));
}

TEST(Ctph, ScoresEqualLibfuzzyOnRealAndNearDuplicatePairs) {
  test::Random random;
  std::vector<std::string> signatures;
  std::size_t near_pairs = 0, high = 0, compared = 0;
  for (const Bytes& data : real_documents(test::quick() ? 60 : 400, random)) {
    const std::string original = reference_hash(data), copy = reference_hash(edited(data, random));
    const int want = fuzzy_compare(original.c_str(), copy.c_str());
    ASSERT_EQ(ctph::compare(original, copy), want) << original << " vs " << copy;
    ++near_pairs;
    high += want >= 50;
    signatures.push_back(original);
  }
  // Every pair of real signatures: most score 0, some share block sizes and text.
  for (std::size_t i = 0; i < signatures.size(); ++i)
    for (std::size_t j = i + 1; j < signatures.size(); ++j) {
      ASSERT_EQ(ctph::compare(signatures[i], signatures[j]), fuzzy_compare(signatures[i].c_str(), signatures[j].c_str()))
          << signatures[i] << " vs " << signatures[j];
      ++compared;
    }
  EXPECT_GE(compared + near_pairs, test::quick() ? 1000u : 10'000u);
  EXPECT_GT(high, near_pairs / 2);  // the planted near-duplicates mostly score high
}

// libfuzzy's signatures of `count` real documents, each followed by an edited copy's.
std::vector<std::string> real_signatures_and_copies(std::size_t count, test::Random& random) {
  std::vector<std::string> signatures;
  for (const Bytes& data : real_documents(count, random)) {
    signatures.push_back(reference_hash(data));
    signatures.push_back(reference_hash(edited(data, random)));
  }
  return signatures;
}

// All pairs of real signatures and their near-duplicates: the matcher's list equals the
// brute-force list of libfuzzy's scores, at two thresholds.
TEST(CtphMatch, AllPairsEqualBruteForce) {
  test::Random random;
  std::vector<std::string> signatures = real_signatures_and_copies(test::quick() ? 60 : 300, random);
  std::vector<ctph::Prepared> prepared(signatures.size());
  for (std::size_t i = 0; i < signatures.size(); ++i) ASSERT_TRUE(ctph::prepare(signatures[i], prepared[i]));
  for (int threshold : {1, 60}) {
    dedup::MatchList want;
    for (std::uint32_t i = 0; i < signatures.size(); ++i)
      for (std::uint32_t j = i + 1; j < signatures.size(); ++j)
        if (const int s = fuzzy_compare(signatures[i].c_str(), signatures[j].c_str()); s >= threshold)
          want.push_back({i, j, s});
    const auto got = dedup::match_all(prepared, threshold);
    EXPECT_EQ(got, want) << "threshold " << threshold;
    EXPECT_GE(want.size(), signatures.size() / 4);  // the planted pairs at least
  }
}

// Signatures read for the GPU alone (their parts' texts) and completed later equal those
// read whole; the CPU's matcher refuses them incomplete rather than miss their pairs.
TEST(CtphMatch, SubstringsAddedLaterEqualThoseMadeAtOnce) {
  test::Random random;
  std::vector<std::string> signatures = real_signatures_and_copies(test::quick() ? 30 : 100, random);
  signatures.push_back("3:aaaaaaaaaaaaaaaaa:abc");  // a run cut to three, a part too short for any substring
  std::vector<ctph::Prepared> whole(signatures.size()), texts(signatures.size());
  for (std::size_t i = 0; i < signatures.size(); ++i) {
    ASSERT_TRUE(ctph::prepare(signatures[i], whole[i]));
    ASSERT_TRUE(ctph::prepare(signatures[i], texts[i], ctph::Substrings::left_out));
    EXPECT_TRUE(ctph::has_substrings(whole[i]));
    EXPECT_EQ(texts[i].first.text, whole[i].first.text);
    EXPECT_EQ(texts[i].second.text, whole[i].second.text);
    EXPECT_EQ(texts[i].block_size, whole[i].block_size);
  }
  EXPECT_FALSE(std::all_of(texts.begin(), texts.end(), [](const ctph::Prepared& p) { return ctph::has_substrings(p); }));
  EXPECT_THROW(dedup::match_all(texts, 1), std::logic_error);
  dedup::add_substrings(texts);
  for (std::size_t i = 0; i < signatures.size(); ++i) {
    EXPECT_EQ(texts[i].first.runs, whole[i].first.runs) << signatures[i];
    EXPECT_EQ(texts[i].second.runs, whole[i].second.runs) << signatures[i];
    EXPECT_EQ(texts[i].first.summary, whole[i].first.summary);
    EXPECT_EQ(texts[i].second.summary, whole[i].second.summary);
  }
  EXPECT_EQ(dedup::match_all(texts, 1), dedup::match_all(whole, 1));
}

// Parts of every length up to 64 over alphabets of 1 to 64 letters (long common
// subsequences, runs cut to three), at equal and doubled block sizes, small ones (whose
// scores are capped) included: the scores are libfuzzy's.
TEST(Ctph, RandomPartsScoreAsLibfuzzyScoresThem) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const auto part = [&](int letters) { return test::random_base64(random, random.integer(0, 64), letters); };
  int rounds[2] = {0, 0}, scored[2] = {0, 0};  // [block sizes doubled]: pairs, and those scoring above 0
  for (int round = 0; round < (test::quick() ? 3000 : 30000); ++round) {
    const int letters = std::vector<int>{1, 2, 3, 5, 16, 64}[static_cast<std::size_t>(round % 6)];
    const std::uint64_t size = std::uint64_t{3} << random.integer(0, 8);
    const std::string base = part(letters);
    std::string other = base;  // a near copy: a few characters changed, dropped or added
    for (int e = random.integer(0, 8); e > 0 && !other.empty(); --e) {
      const auto at = static_cast<std::size_t>(random.integer(0, static_cast<int>(other.size()) - 1));
      const int kind = random.integer(0, 2);
      if (kind == 0) other[at] = test::random_base64(random, 1, letters)[0];
      else if (kind == 1) other.erase(at, 1);
      else if (other.size() < 64) other.insert(at, test::random_base64(random, 1, letters));
    }
    // Equal block sizes compare first with first (and second with second); at double the
    // size, x's second part meets y's first: a near copy in both cases.
    const bool doubled = random.integer(0, 1) == 1;
    const std::string x = doubled ? fmt::format("{}:{}:{}", size, part(letters), base)
                                  : fmt::format("{}:{}:{}", size, base, part(letters));
    const std::string y = fmt::format("{}:{}:{}", doubled ? size * 2 : size, other, part(letters));
    const int score = ctph::compare(x, y);
    ASSERT_EQ(score, fuzzy_compare(x.c_str(), y.c_str())) << x << " " << y;
    ASSERT_EQ(ctph::compare(y, x), fuzzy_compare(y.c_str(), x.c_str())) << y << " " << x;
    ++rounds[doubled];
    scored[doubled] += score > 0;
  }
  for (int doubled : {0, 1}) EXPECT_GT(scored[doubled], rounds[doubled] / 3) << "block sizes doubled: " << doubled;
}

TEST(Ctph, OddSignaturesScoreAsLibfuzzyScoresThem) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string good = "3:abcdefgh:abcd";
  // Malformed (-1): no block size, missing colons, a part over 64 characters once runs
  // of more than three are cut. Odd but accepted: blanks and signs before the block
  // size, a block size too large (saturates), long runs, a trailing ",file".
  const std::vector<std::string> odd = {"", "3", "3:", "x:abc:def", "3abc:def", ":abc:def",
                                        "3:" + alphabet + "Q:abc", "3:abc:" + alphabet + "Q",
                                        "3:" + alphabet + ":abc", "3:" + std::string(70, 'a') + ":abc",
                                        " 3:abc:def", "+3:abc:def", "-3:abc:def", "03:abcdefgh:abcd",
                                        "3:abcdefgh:abcd,\"file\"", "99999999999999999999:abc:def"};
  for (const std::string& s : odd) {
    EXPECT_EQ(ctph::compare(s, good), fuzzy_compare(s.c_str(), good.c_str())) << s;
    EXPECT_EQ(ctph::compare(good, s), fuzzy_compare(good.c_str(), s.c_str())) << s;
    EXPECT_EQ(ctph::compare(s, s), fuzzy_compare(s.c_str(), s.c_str())) << s;
  }
  EXPECT_EQ(ctph::compare("3:", good), -1);
  EXPECT_EQ(ctph::compare("96:abcdefghijk:lmnopqrst,\"a\"", "96:abcdefghijk:lmnopqrst,\"b\""), 100);
}

}  // namespace
}  // namespace simkit
