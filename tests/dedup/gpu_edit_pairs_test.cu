// Each GPU edit-distance kernel against the CPU (itself tested against the reference DP):
// random sets of every length 0..320 and alphabet, the triangle and the rectangle, rates
// that keep few pairs and rates that keep most (the output buffer overflows and the launch
// runs again), and many blocks of one set in one launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dedup/edit_detail.hpp"
#include "dedup/edit_distance.hpp"
#include "edit_distance_fixture.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

constexpr dedup::EditKernel kKernels[] = {dedup::EditKernel::shared_rows, dedup::EditKernel::global_rows,
                                          dedup::EditKernel::bit_parallel};

TEST(GpuEditPairs, EachKernelEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int letters : {2, 4, 64, 256}) {
    // Quick (compute-sanitizer) shapes still span several 64-bit words per string.
    const int longest = test::quick() ? 200 : 320;
    const dedup::StringSet xs = test::random_set(random, test::quick() ? 40 : 700, longest, letters);
    const dedup::StringSet ys = test::random_set(random, test::quick() ? 30 : 300, longest, letters);
    for (const dedup::PairRule rule : {dedup::PairRule{0.05, 0}, dedup::PairRule{0.05, 24}, dedup::PairRule{0.3, 0},
                                       dedup::PairRule{0.7, 0}}) {
      const auto triangle = dedup::edit_pairs_cpu(xs, xs, true, rule);
      const auto rectangle = dedup::edit_pairs_cpu(xs, ys, false, rule);
      for (const auto kernel : kKernels) {
        double ms = -1;
        EXPECT_EQ(dedup::edit_pairs_gpu(xs, xs, true, rule, kernel, 0, &ms), triangle)
            << dedup::kernel_name(kernel) << ", " << letters << " letters, " << test::describe(rule);
        EXPECT_GE(ms, 0.0);
        EXPECT_EQ(dedup::edit_pairs_gpu(xs, ys, false, rule, kernel, 0), rectangle)
            << dedup::kernel_name(kernel) << ", " << letters << " letters, " << test::describe(rule);
        // As found: the same pairs in the kernels' order.
        auto as_found = dedup::edit_pairs_gpu(xs, ys, false, rule, kernel, 0, nullptr, dedup::PairOrder::as_found);
        dedup::detail::sort_pairs(as_found);
        EXPECT_EQ(as_found, rectangle) << dedup::kernel_name(kernel) << ", as found";
      }
    }
  }
}

// Many blocks of one set in one launch (triangles, rectangles, empty and overlapping
// blocks): each kernel's pairs equal the CPU's, sorted and as found.
TEST(GpuEditPairs, BlocksInOneLaunchEqualTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int letters : {2, 64}) {
    const dedup::StringSet set = test::random_set(random, test::quick() ? 60 : 600, test::quick() ? 200 : 320, letters);
    const auto blocks = test::random_blocks(random, static_cast<int>(set.size()), test::quick() ? 8 : 60);
    for (const dedup::PairRule rule : {dedup::PairRule{0.05, 24}, dedup::PairRule{0.3, 0}}) {
      const auto want = dedup::edit_pairs_cpu(set, blocks, rule);
      for (const auto kernel : kKernels) {
        EXPECT_EQ(dedup::edit_pairs_gpu(set, blocks, rule, kernel, 0), want)
            << dedup::kernel_name(kernel) << ", " << letters << " letters, " << test::describe(rule);
        auto as_found = dedup::edit_pairs_gpu(set, blocks, rule, kernel, 0, nullptr, dedup::PairOrder::as_found);
        dedup::detail::sort_pairs(as_found);  // (a pair in two blocks: the same distance twice)
        EXPECT_EQ(as_found, want) << dedup::kernel_name(kernel) << ", as found";
      }
    }
  }
}

// More found pairs than the first buffer (2^20), and many tiles: short strings over two
// letters at a generous rate.
TEST(GpuEditPairs, ManyTilesAndAFullBuffer) {
  SIMKIT_REQUIRE_GPU();
  if (test::quick()) GTEST_SKIP() << "full shapes only";
  test::Random random;
  SCOPED_TRACE(random.seed());
  const dedup::StringSet xs = test::random_set(random, 4000, 12, 2);
  const auto want = dedup::edit_pairs_cpu(xs, xs, true, dedup::PairRule{0.5});
  ASSERT_GT(want.size(), std::size_t{1} << 20);
  for (const auto kernel : kKernels)
    EXPECT_EQ(dedup::edit_pairs_gpu(xs, xs, true, dedup::PairRule{0.5}, kernel, 0), want) << dedup::kernel_name(kernel);
}

// Texts end to end, as distances_within_gpu takes them: the bytes and where each starts.
std::pair<std::string, std::vector<std::uint64_t>> packed(const std::vector<std::string>& texts) {
  std::string chars;
  std::vector<std::uint64_t> offsets{0};
  for (const std::string& t : texts) {
    chars += t;
    offsets.push_back(chars.size());
  }
  return {chars, offsets};
}

// The same pairs with their texts sent to the GPU ahead (send_texts_to_gpu).
std::vector<std::uint32_t> distances_of_sent(const std::vector<std::string>& texts,
                                             const std::vector<dedup::TextPair>& pairs) {
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  const dedup::GpuTextsPtr sent = dedup::send_texts_to_gpu(views, 0);
  EXPECT_NE(sent, nullptr);
  return sent != nullptr ? dedup::distances_within_gpu(*sent, pairs) : std::vector<std::uint32_t>{};
}

// Texts i and j at `limit`, and the distance the CPU's banded distance (tested against the
// reference DP) gives them up to the limit and the GPU's widest band for their lengths.
void expect_pair(const std::vector<std::string>& texts, std::uint32_t i, std::uint32_t j, std::uint32_t limit,
                 std::vector<dedup::TextPair>& pairs, std::vector<std::uint32_t>& want) {
  const std::uint32_t widest = std::min(limit, dedup::gpu_band_edits(texts[i].size(), texts[j].size()));
  const auto d = dedup::edit_distance_within(texts[i], texts[j], widest);
  pairs.push_back({i, j, limit});
  want.push_back(d ? *d : dedup::kBeyond);
}

// The verification kernels against the reference DP: texts of 0 to 3,000 bytes over 2 to
// 256 letters, unrelated and edited copies (distances across the band's widths of 1 to 32
// words), shared ends, every limit around the distance and far above the narrow bands (the
// wide kernel's); in one upload and in chunks of a few texts.
TEST(GpuVerify, DistancesEqualTheReference) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> texts;
  const int count = test::quick() ? 40 : 240;
  for (int i = 0; i < count; ++i) {
    const int letters = std::vector<int>{2, 4, 64, 256}[static_cast<std::size_t>(i % 4)];
    if (i % 2 == 1) {
      const std::string& earlier = texts[static_cast<std::size_t>(random.integer(0, i - 1))];
      texts.push_back(test::edited(random, earlier, random.integer(0, i % 8 == 1 ? 1200 : 150), letters));
    } else {
      const std::string ends = i % 6 == 0 ? test::random_string(random, 80, letters) : std::string();
      texts.push_back(ends + test::random_string(random, random.integer(0, test::quick() ? 600 : 2000), letters) + ends);
    }
  }
  const auto [chars, offsets] = packed(texts);
  std::vector<dedup::TextPair> pairs;
  std::vector<std::uint32_t> want;
  for (std::uint32_t i = 0; i < texts.size(); ++i) {
    // Each text with the one before (often its edited source) and a random one.
    for (const std::uint32_t j : {i == 0 ? 0u : i - 1, static_cast<std::uint32_t>(random.integer(0, count - 1))}) {
      const std::uint32_t d = dedup::edit_distance_reference(texts[i], texts[j]);
      for (const std::uint32_t limit : {0u, d / 2, d == 0 ? 0u : d - 1, d, d + 1, 100000u}) {
        pairs.push_back({i, j, limit});
        want.push_back(d <= std::min(limit, dedup::gpu_band_edits(texts[i].size(), texts[j].size())) ? d : dedup::kBeyond);
      }
    }
  }
  double ms = -1;
  EXPECT_EQ(dedup::distances_within_gpu(chars.data(), offsets, pairs, 0, &ms), want);
  EXPECT_GE(ms, 0.0);
  EXPECT_EQ(dedup::distances_within_gpu(chars.data(), offsets, pairs, 0, nullptr, 8000), want) << "in chunks";
  EXPECT_EQ(distances_of_sent(texts, pairs), want) << "texts sent ahead";
}

// The wide bands (limits past kGpuNarrowEdits) against the CPU's banded distance (itself
// tested against the reference DP): texts of 3,000 to 40,000 bytes and edited copies at
// distances of hundreds to thousands, unrelated texts (the cut-off), limits around each
// distance; unrelated texts of 12,000 and 20,000 bytes (distances past 8,191 and 16,383:
// bands of 256 and 512 words, 8 and 16 a lane); hundreds of short pairs, more than the
// kernel's warps (each warp's table used again); a text past kGpuTableText, resolved up
// to the narrow bands only; in one upload and in chunks.
TEST(GpuVerify, WideBandsEqualTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> texts;
  const int count = test::quick() ? 8 : 24;
  for (int i = 0; i < count; ++i) {
    const int letters = i % 4 < 2 ? 4 : 64;
    if (i % 2 == 1) {
      const std::string& source = texts.back();
      const int edits = random.integer(100, std::max(200, static_cast<int>(source.size()) / 5));
      texts.push_back(test::edited(random, source, edits, letters));
    } else {
      texts.push_back(test::random_string(random, random.integer(3000, test::quick() ? 12000 : 40000), letters));
    }
  }
  // The widest bands: unrelated texts far apart.
  for (const int length : {12000, 12000, 20000, 20000}) texts.push_back(test::random_string(random, length, 64));
  const auto widest_first = static_cast<std::uint32_t>(texts.size() - 4);
  // Short pairs, many: an edited copy each.
  const auto short_first = static_cast<std::uint32_t>(texts.size());
  for (int i = 0; i < 100; ++i) {
    texts.push_back(test::random_string(random, random.integer(50, 400), 4));
    texts.push_back(test::edited(random, texts.back(), random.integer(0, 40), 4));
  }
  // Past the table: a long text and two copies, a few edits and a few thousand away.
  const std::string long_text = test::random_string(random, static_cast<int>(dedup::kGpuTableText) + 5000, 64);
  texts.push_back(long_text);
  texts.push_back(test::edited(random, long_text, 12, 64));
  texts.push_back(test::edited(random, long_text, 3000, 64));
  const auto [chars, offsets] = packed(texts);
  std::vector<dedup::TextPair> pairs;
  std::vector<std::uint32_t> want;
  const auto add = [&](std::uint32_t i, std::uint32_t j, std::uint32_t limit) {
    expect_pair(texts, i, j, limit, pairs, want);
  };
  for (std::uint32_t i = 1; i < static_cast<std::uint32_t>(count); i += 2) {
    const std::uint32_t d = dedup::edit_distance(texts[i - 1], texts[i]);
    ASSERT_GT(d, 0u);
    for (const std::uint32_t limit : {d - 1, d, d + 1, dedup::kGpuBandEdits, 100000u})
      add(i - 1, i, std::max(limit, dedup::kGpuNarrowEdits + 1));
    add(i, static_cast<std::uint32_t>(random.integer(0, count - 1)), 6000);  // mostly unrelated
  }
  for (const std::uint32_t limit : {9000u, 20000u, dedup::kGpuBandEdits}) {
    add(widest_first, widest_first + 1, limit);
    add(widest_first + 2, widest_first + 3, limit);
  }
  for (std::uint32_t i = short_first; i < short_first + 200; i += 2)
    for (const std::uint32_t limit : {2048u, 3000u, 5000u}) add(i, i + 1, limit);
  const auto last = static_cast<std::uint32_t>(texts.size() - 1);
  for (const std::uint32_t limit : {dedup::kGpuNarrowEdits + 1, 30000u}) {
    add(last - 2, last - 1, limit);
    add(last - 2, last, limit);
  }
  ASSERT_NE(want[want.size() - 2], dedup::kBeyond) << "a few edits past the table: within the narrow band";
  ASSERT_EQ(want[want.size() - 1], dedup::kBeyond) << "thousands of edits past the table: beyond the narrow band";
  double ms = -1;
  EXPECT_EQ(dedup::distances_within_gpu(chars.data(), offsets, pairs, 0, &ms), want);
  EXPECT_GE(ms, 0.0);
  EXPECT_EQ(dedup::distances_within_gpu(chars.data(), offsets, pairs, 0, nullptr, 100000), want) << "in chunks";
  EXPECT_EQ(distances_of_sent(texts, pairs), want) << "texts sent ahead";
}

// Texts sent ahead in many pinned buffers' worth (the copy gathers them, texts straddling
// the buffers), empty ones among them: each text and an edited copy at their distances;
// texts past the budget are not sent.
// Pairs whose byte counts give their distance exactly: a text over lower-case letters and
// copies with E bytes replaced by, or E bytes inserted from, upper-case ones (distance E,
// and a lower bound of E from the counts), at limits E - 1, E and E + 1. E around the
// bands' widths (63, 64, 2,047, 2,048, 4,095, 4,096), so that the bound refutes a pair at
// E - 1 and skips every band narrower than E but never the one that holds it.
TEST(GpuVerify, PairsAtTheirByteCountsBound) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const int length = test::quick() ? 9000 : 30000;
  std::string source = test::random_string(random, length, 26);
  for (char& c : source) c = static_cast<char>(c - 'A' + 'a');
  std::vector<std::string> texts{source};
  std::vector<std::uint32_t> distances{0};
  for (const int edits : {1, 40, 63, 64, 200, 2047, 2048, 4095, 4096}) {
    if (edits * 2 > length) continue;
    // E distinct positions, spread over the text.
    std::vector<int> at;
    for (int e = 0; e < edits; ++e) at.push_back(static_cast<int>(static_cast<std::int64_t>(e) * length / edits) + random.integer(0, length / edits - 1));
    std::string replaced = source, inserted;
    std::size_t next = 0;
    for (int i = 0; i < length; ++i) {
      const bool edited = next < at.size() && at[next] == i;
      const char upper = static_cast<char>('A' + random.integer(0, 25));
      if (edited) {
        replaced[static_cast<std::size_t>(i)] = upper;
        inserted += upper;
        ++next;
      }
      inserted += source[static_cast<std::size_t>(i)];
    }
    for (std::string* copy : {&replaced, &inserted}) {
      texts.push_back(*copy);
      distances.push_back(static_cast<std::uint32_t>(edits));
    }
  }
  const auto [chars, offsets] = packed(texts);
  std::vector<dedup::TextPair> pairs;
  std::vector<std::uint32_t> want;
  for (std::uint32_t i = 1; i < texts.size(); ++i) {
    const std::uint32_t d = distances[i];
    ASSERT_EQ(dedup::edit_distance_within(texts[0], texts[i], d), d) << "copy " << i;
    for (const std::uint32_t limit : {d - 1, d, d + 1}) {
      pairs.push_back({0, i, limit});
      want.push_back(d <= limit ? d : dedup::kBeyond);
    }
  }
  EXPECT_EQ(dedup::distances_within_gpu(chars.data(), offsets, pairs, 0), want);
}

// Narrow limits whose pairs pass the narrow kernel's bands by ballots (more than 255 edits
// apart), deferred to the table kernel: edited copies at hundreds to 1,500 edits at
// limits around their distances and at the narrow bands' widest; unrelated texts (beyond);
// more such pairs than the deferred kernel's warps; and a text past kGpuTableText whose
// edits lie within a few thousand bytes (its pattern fits the tables once trimmed).
TEST(GpuVerify, NarrowLimitsPastTheBallotBandsEqualTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> texts;
  std::vector<dedup::TextPair> pairs;
  std::vector<std::uint32_t> want;
  const auto add = [&](std::uint32_t i, std::uint32_t j, std::uint32_t limit) {
    expect_pair(texts, i, j, limit, pairs, want);
  };
  const int count = test::quick() ? 150 : 400;
  for (int i = 0; i < count; ++i) {
    const int letters = i % 3 == 0 ? 4 : 64;
    texts.push_back(test::random_string(random, random.integer(1000, 6000), letters));
    const int edits = random.integer(200, std::min(1500, static_cast<int>(texts.back().size()) / 4));
    texts.push_back(test::edited(random, texts.back(), edits, letters));
    const auto a = static_cast<std::uint32_t>(texts.size() - 2);
    const std::uint32_t d = *dedup::edit_distance_within(texts[a], texts[a + 1], dedup::kGpuNarrowEdits);
    for (const std::uint32_t limit : {d - 1, d, d + 1, dedup::kGpuNarrowEdits})
      if (limit >= 256) add(a, a + 1, limit);
    if (i % 8 == 0) add(a, static_cast<std::uint32_t>(random.integer(0, static_cast<int>(a))), dedup::kGpuNarrowEdits);
  }
  const std::string long_text = test::random_string(random, static_cast<int>(dedup::kGpuTableText) + 40000, 64);
  const std::size_t at = 100000;
  texts.push_back(long_text);
  texts.push_back(long_text.substr(0, at) + test::edited(random, long_text.substr(at, 5000), 400, 64) +
                  long_text.substr(at + 5000));
  const auto last = static_cast<std::uint32_t>(texts.size() - 2);
  for (const std::uint32_t limit : {300u, dedup::kGpuNarrowEdits, 30000u}) add(last, last + 1, limit);
  ASSERT_NE(want.back(), dedup::kBeyond) << "a few hundred edits in a few thousand bytes: within the narrow bands";
  const auto [chars, offsets] = packed(texts);
  EXPECT_EQ(dedup::distances_within_gpu(chars.data(), offsets, pairs, 0), want);
  EXPECT_EQ(distances_of_sent(texts, pairs), want) << "texts sent ahead";
}

TEST(GpuVerify, TextsSentAheadInManyPieces) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> texts;
  std::vector<dedup::TextPair> pairs;
  std::vector<std::uint32_t> want;
  std::size_t bytes = 0;
  while (bytes < (test::quick() ? 10u : 30u) << 20) {
    const int length = random.integer(0, 4) == 0 ? 0 : random.integer(1, 200000);
    texts.push_back(test::random_string(random, length, 64));
    texts.push_back(test::edited(random, texts.back(), random.integer(0, 30), 64));
    const auto i = static_cast<std::uint32_t>(texts.size() - 2);
    const auto d = dedup::edit_distance_within(texts[i], texts[i + 1], 40);
    pairs.push_back({i, i + 1, 40});
    want.push_back(d ? *d : dedup::kBeyond);
    bytes += texts[i].size() + texts[i + 1].size();
  }
  EXPECT_EQ(distances_of_sent(texts, pairs), want);
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  EXPECT_EQ(dedup::send_texts_to_gpu(views, 0, 1000), nullptr) << "past the budget";
}

}  // namespace
}  // namespace simkit
