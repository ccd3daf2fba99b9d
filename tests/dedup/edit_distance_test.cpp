// Levenshtein distances on the CPU against the two-row reference DP: the bit-parallel
// distance, the limited one, and all pairs below an edit rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dedup/edit_distance.hpp"
#include "edit_distance_fixture.hpp"
#include "simkit/error.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

TEST(EditDistance, ReferenceOnKnownCases) {
  EXPECT_EQ(dedup::edit_distance_reference("", ""), 0u);
  EXPECT_EQ(dedup::edit_distance_reference("abc", ""), 3u);
  EXPECT_EQ(dedup::edit_distance_reference("", "abcd"), 4u);
  EXPECT_EQ(dedup::edit_distance_reference("kitten", "sitting"), 3u);
  EXPECT_EQ(dedup::edit_distance_reference("flaw", "lawn"), 2u);
  EXPECT_EQ(dedup::edit_distance_reference("intention", "execution"), 5u);
}

// Lengths 0..300 (across the 64-bit word edges) over 2, 4, 64 and 256 letters, unrelated
// and edited pairs; every limit around the true distance.
TEST(EditDistance, BitParallelAndLimitedEqualTheReference) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int letters : {2, 4, 64, 256})
    for (int trial = 0; trial < (test::quick() ? 60 : 300); ++trial) {
      const std::string a = test::random_string(random, random.integer(0, 300), letters);
      const std::string b = trial % 2 == 0 ? test::random_string(random, random.integer(0, 300), letters)
                                           : test::edited(random, a, random.integer(0, 40), letters);
      const std::uint32_t want = dedup::edit_distance_reference(a, b);
      ASSERT_EQ(dedup::edit_distance(a, b), want) << letters << " letters: " << a << " / " << b;
      ASSERT_EQ(dedup::edit_distance(b, a), want);
      for (std::uint32_t limit : {0u, want / 2, want == 0 ? 0u : want - 1, want, want + 1, want + 50}) {
        const auto got = dedup::edit_distance_within(a, b, limit);
        if (want <= limit) {
          ASSERT_TRUE(got.has_value()) << "limit " << limit << " distance " << want;
          ASSERT_EQ(*got, want) << "limit " << limit;
        } else {
          ASSERT_FALSE(got.has_value()) << "limit " << limit << " distance " << want << " gave " << *got;
        }
      }
    }
}

// distance_in_diagonal_band of a and b: `want` (the true distance) when it is within the
// limit and the band's width, else nothing.
void expect_band(const std::string& a, const std::string& b, std::uint32_t limit, int words, std::uint32_t want) {
  const auto widest = static_cast<std::uint32_t>(64 * words - 1);
  const auto got = dedup::distance_in_diagonal_band(a, b, limit, words);
  if (want <= std::min(limit, widest)) {
    ASSERT_TRUE(got.has_value()) << words << " words, limit " << limit << ", distance " << want;
    ASSERT_EQ(*got, want) << words << " words, limit " << limit;
  } else {
    ASSERT_FALSE(got.has_value()) << words << " words, limit " << limit << ", distance " << want << " gave " << *got;
  }
}

// The GPU verification's band, run on the CPU: for every width of 1..3 words (and 32) and
// every limit around the distance, the distance when within both, else nothing; pairs
// with common ends, lengths across word edges, distances on both sides of 63 and 127.
TEST(EditDistance, DiagonalBandEqualsTheReference) {
  EXPECT_THROW(dedup::distance_in_diagonal_band("a", "b", 1, 0), UsageError);
  EXPECT_THROW(dedup::distance_in_diagonal_band("a", "b", 1, dedup::kGpuBandWords + 1), UsageError);
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int letters : {2, 4, 64, 256})
    for (int trial = 0; trial < (test::quick() ? 40 : 120); ++trial) {
      std::string a = test::random_string(random, random.integer(0, 400), letters);
      std::string b = trial % 3 == 0 ? test::random_string(random, random.integer(0, 400), letters)
                                     : test::edited(random, a, random.integer(0, 150), letters);
      if (trial % 5 == 1) {  // shared ends, trimmed before the band
        const std::string ends = test::random_string(random, 50, letters);
        a = ends + a + ends;
        b = ends + b + ends;
      }
      const std::uint32_t want = dedup::edit_distance_reference(a, b);
      for (int words : {1, 2, 3, trial % 4 == 0 ? 32 : 1})
        for (std::uint32_t limit : {0u, want / 2, want == 0 ? 0u : want - 1, want, want + 1, 5000u}) {
          expect_band(trial % 2 == 0 ? a : b, trial % 2 == 0 ? b : a, limit, words, want);
          if (HasFatalFailure()) return;
        }
    }
}

// The wide bands (the GPU's for limits past kGpuNarrowEdits): texts of thousands of bytes
// at distances of hundreds to thousands, bands of 32 to 128 words and limits around the
// distance.
TEST(EditDistance, WideDiagonalBandsEqualTheReference) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int trial = 0; trial < (test::quick() ? 2 : 6); ++trial) {
    const int letters = trial % 2 == 0 ? 4 : 64;
    const std::string a = test::random_string(random, random.integer(2000, 5000), letters);
    const std::string b = test::edited(random, a, random.integer(300, 1500), letters);
    const std::uint32_t want = dedup::edit_distance_reference(a, b);
    for (int words : {32, 64, 128})
      for (std::uint32_t limit : {want - 1, want, 40000u}) {
        expect_band(a, b, limit, words, want);
        if (HasFatalFailure()) return;
      }
  }
}

// Documents: thousands of characters, many 64-row blocks, and a band far narrower than them.
TEST(EditDistance, LongDocuments) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int trial = 0; trial < (test::quick() ? 3 : 12); ++trial) {
    const int letters = trial % 3 == 0 ? 4 : 64;
    const std::string a = test::random_string(random, random.integer(1000, 4000), letters);
    // Unrelated texts too: their columns pass any small limit early (the cut-off).
    const std::string b = trial % 4 == 3 ? test::random_string(random, static_cast<int>(a.size()) + random.integer(-50, 50), letters)
                                         : test::edited(random, a, random.integer(0, 120), letters);
    const std::uint32_t want = dedup::edit_distance_reference(a, b);
    EXPECT_EQ(dedup::edit_distance(a, b), want);
    EXPECT_EQ(dedup::edit_distance_within(a, b, want), want);
    EXPECT_EQ(dedup::edit_distance_within(b, a, want + 7), want);
    if (want > 0) { EXPECT_FALSE(dedup::edit_distance_within(a, b, want - 1).has_value()); }
    EXPECT_EQ(dedup::edit_distance_within(a, b, want / 3).has_value(), want == 0);
  }
}

TEST(EditDistance, BelowRate) {
  EXPECT_TRUE(dedup::below_rate(0, 0, 0, 0.1));  // two empty strings: rate 0
  EXPECT_FALSE(dedup::below_rate(0, 0, 0, 0.0));
  EXPECT_TRUE(dedup::below_rate(1, 10, 10, 0.1));  // 1/20 < 0.1
  EXPECT_FALSE(dedup::below_rate(2, 10, 10, 0.1));  // 2/20 is not below 0.1
  EXPECT_FALSE(dedup::below_rate(5, 0, 5, 0.5));
}

TEST(EditPairs, CpuEqualsBruteForce) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int letters : {2, 4, 64, 256}) {
    const dedup::StringSet xs = test::random_set(random, 100, 320, letters);
    const dedup::StringSet ys = test::random_set(random, 60, 320, letters);
    const test::ReferencePairs triangle(xs, xs, true), rectangle(xs, ys, false);
    for (const dedup::PairRule rule : test::pair_rules()) {
      const auto within = dedup::edit_pairs_cpu(xs, xs, true, rule);
      EXPECT_EQ(within, triangle.passing(rule)) << letters << " letters, " << test::describe(rule);
      EXPECT_EQ(dedup::edit_pairs_cpu(xs, ys, false, rule), rectangle.passing(rule))
          << letters << " letters, " << test::describe(rule);
      if (rule.rate >= 0.3) { EXPECT_FALSE(within.empty()); }
    }
  }
}

// Many blocks of one set at once: triangles, rectangles, empty and overlapping blocks.
TEST(EditPairs, BlocksEqualBruteForce) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int letters : {2, 64}) {
    const dedup::StringSet set = test::random_set(random, 90, 320, letters);
    const auto distance = test::all_distances(set);
    const std::vector<dedup::PairBlock> blocks = test::random_blocks(random, 90, 14);
    for (const dedup::PairRule rule : test::pair_rules())
      EXPECT_EQ(dedup::edit_pairs_cpu(set, blocks, rule), test::block_pairs(set, distance, blocks, rule))
          << letters << " letters, " << test::describe(rule);
  }
}

TEST(EditPairs, RefusesBlocksOutsideTheStrings) {
  dedup::StringSet set;
  for (const char* s : {"ab", "abc", "b"}) set.add(s);
  const dedup::PairRule rule{0.5};
  EXPECT_THROW(dedup::edit_pairs_cpu(set, {{0, 2, 2, 2, false}}, rule), UsageError);
  EXPECT_THROW(dedup::edit_pairs_cpu(set, {{3, 1, 0, 1, false}}, rule), UsageError);
  EXPECT_THROW(dedup::edit_pairs_cpu(set, {{0, 2, 1, 2, true}}, rule), UsageError);
  EXPECT_THROW(dedup::edit_pairs_cpu(set, dedup::StringSet{}, true, rule), UsageError);  // a triangle of two sets
  EXPECT_EQ(dedup::edit_pairs_cpu(set, {{3, 0, 3, 0, true}, {1, 2, 0, 0, false}}, rule).size(), 0u);
}

TEST(EditPairs, RefusesLongStrings) {
  dedup::StringSet set;
  set.add("short");
  set.add(std::string(dedup::kMaxPairString + 1, 'x'));
  EXPECT_THROW(dedup::edit_pairs_cpu(set, set, true, dedup::PairRule{0.1}), InputError);
}

}  // namespace
}  // namespace simkit
