// The GPU paths of simkit dedup against the CPU's: ssdeep matching (match_all_gpu) on
// real signatures, planted near-duplicates and signatures made to be hard, and the
// edit-rate pipeline through each signature kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "dedup/match_gpu.hpp"
#include "dedup/sorted_runs.hpp"
#include "dedup_fixture.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "simkit/threads.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

TEST(GpuDedup, SsdeepMatchingEqualsTheCpuOnRealFiles) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const test::TempDir dir;
  const auto files = test::plant_near_duplicates(dir.path(), test::quick() ? 100 : 1500, random);
  const auto prepared = test::prepare_all(dedup::hash_files(files, nullptr));
  for (int threshold : {1, 50, 100}) {
    const auto want = dedup::match_all(prepared, threshold);
    EXPECT_EQ(dedup::match_all_gpu(prepared, threshold, 0), want) << "threshold " << threshold;
    EXPECT_EQ(dedup::match_every_pair_gpu(prepared, threshold, 0, nullptr, {}), want) << "threshold " << threshold;
    if (threshold == 1) { EXPECT_GE(want.size(), files.size() / 4); }
  }
}

// Every length 0..64 of both parts, three block sizes (and 0), identical signatures, common
// substrings only just 7 long, few letters (long LCS), runs cut to three. Then the same
// with second parts of at most 32 characters, as ssdeep writes them, which the kernels
// take in 32-bit steps where a whole warp's are that short.
TEST(GpuDedup, SsdeepMatchingEqualsTheCpuOnHardSignatures) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const auto text = [&](int length, int letters) { return test::random_base64(random, length, letters); };
  for (const int longest_second : {64, 32}) {
    std::vector<std::string> signatures;
    const int n = test::quick() ? 600 : 3000;
    for (int i = 0; i < n; ++i) {
      const std::string size = std::to_string(i % 97 == 5 ? 0 : 3 << random.integer(0, 2));  // 0: hand-made lists
      if (i % 5 == 4) {
        const std::string copy = signatures[random.integer(0, i - 1)];
        signatures.push_back(copy);
      } else {
        const int letters = i % 5 == 0 ? 2 : i % 5 == 1 ? 5 : 64;
        signatures.push_back(size + ":" + text(random.integer(0, 64), letters) + ":" +
                             text(random.integer(0, longest_second), letters));
      }
    }
    const auto prepared = test::prepare_all(signatures);
    // As simkit dedup reads them for the GPU: the parts' texts alone.
    std::vector<ctph::Prepared> texts(signatures.size());
    for (std::size_t i = 0; i < signatures.size(); ++i) ctph::prepare(signatures[i], texts[i], ctph::Substrings::left_out);
    for (int threshold : {1, 30, 90}) {
      const auto want = dedup::match_all(prepared, threshold);
      const std::string label = "second parts up to " + std::to_string(longest_second) + ", threshold " +
                                std::to_string(threshold);
      EXPECT_EQ(dedup::match_all_gpu(prepared, threshold, 0), want) << label;
      EXPECT_EQ(dedup::match_all_gpu(texts, threshold, 0), want) << label;
      EXPECT_EQ(dedup::match_every_pair_gpu(texts, threshold, 0, nullptr, {}), want) << label;
      EXPECT_FALSE(want.empty());
    }
  }
}

// Every pair scored under budgets that hold fewer matches than a group's: 1,600 copies of
// a signature among near copies, and 400 of block size 12 whose first part is their
// second (the same group's meeting and the double meeting each past 2^18 matches, a
// launch's least bound), whole and in shares. Budget 0: the buffer grown; 1: the rows in
// slices; the signatures' bytes (134 a signature) and 12 MiB: both.
TEST(GpuDedup, EveryPairTakesRowsInSlicesUnderABudget) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> signatures;
  const std::string second = test::random_base64(random, 20, 64);
  const std::string common = "6:" + test::random_base64(random, 40, 64) + ":" + second;
  for (int i = 0; i < 1600; ++i) signatures.push_back(common);
  for (int i = 0; i < 300; ++i) {
    std::string copy = common;
    copy[2 + random.integer(0, 39)] = test::random_base64(random, 1, 64)[0];
    signatures.push_back(copy);
  }
  for (int i = 0; i < 400; ++i) signatures.push_back("12:" + second + ":" + test::random_base64(random, 10, 64));
  const auto prepared = test::prepare_all(signatures);
  const auto want = dedup::match_all(prepared, 50);
  ASSERT_GT(want.size(), std::size_t{1} << 21);
  const std::size_t held = prepared.size() * 134;
  for (std::size_t budget : {std::size_t{0}, std::size_t{1}, held + (std::size_t{12} << 20)}) {
    EXPECT_EQ(dedup::match_every_pair_gpu(prepared, 50, 0, nullptr, {}, budget), want) << "budget " << budget;
    dedup::MatchList parts;
    for (std::size_t part = 0; part < 3; ++part) {
      const auto mine = dedup::match_every_pair_gpu(prepared, 50, 0, nullptr, {part, 3}, budget);
      parts.insert(parts.end(), mine.begin(), mine.end());
    }
    EXPECT_EQ(test::sorted_by_pair(std::move(parts)), want) << "three shares, budget " << budget;
  }
}

// A tile of 64 rows whose matches pass a launch's least bound (4,300 copies of one
// signature: a tile's rows meet over 260,000 later copies) is taken whole, and the
// buffer shrinks back after it. Every pair of copies scores 100.
TEST(GpuDedup, EveryPairTakesATileWholePastTheBudget) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::uint32_t n = 4300;
  const std::vector<std::string> signatures(
      n, "3:" + test::random_base64(random, 50, 64) + ":" + test::random_base64(random, 25, 64));
  dedup::MatchList want;
  for (std::uint32_t a = 0; a < n; ++a)
    for (std::uint32_t b = a + 1; b < n; ++b) want.push_back({a, b, 100});
  EXPECT_EQ(dedup::match_every_pair_gpu(test::prepare_all(signatures), 50, 0, nullptr, {}, 1), want);
}

// The 7-gram index against the CPU and against every pair scored: chunks of one row (a
// tiny budget), the rows shared among three workers, block sizes 0, doubled and past
// 2^64 / 2, families of near copies, runs of identical signatures (rows that meet their
// later signatures directly) and short parts that only identity can match.
TEST(GpuDedup, SsdeepIndexEqualsTheCpuInChunksAndShares) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const auto text = [&](int length, int letters) { return test::random_base64(random, length, letters); };
  std::vector<std::string> signatures;
  const int n = test::quick() ? 800 : 4000;
  const std::string huge = "18446744073709551615";  // strtoull saturates: 2^64 - 1
  for (int i = 0; i < n; ++i) {
    const int kind = i % 7;
    const std::string hand_made[] = {"0", huge, "18446744073709551614", "9223372036854775807"};
    const std::string size = kind == 6 ? hand_made[i % 4] : std::to_string(3 << random.integer(0, 3));
    if (kind == 5 && i > 0) {  // a near copy: a few characters changed
      std::string copy = signatures[random.integer(std::max(0, i - 50), i - 1)];
      for (int e = random.integer(0, 3); e > 0; --e) {
        const auto colon = static_cast<int>(copy.find(':'));  // the parts only, not the block size
        const std::size_t at = random.integer(colon, static_cast<int>(copy.size()) - 1);
        if (copy[at] != ':') copy[at] = text(1, 64)[0];
      }
      signatures.push_back(copy);
    } else if (kind == 4 && i > 0) {
      signatures.push_back(signatures[random.integer(0, i - 1)]);
    } else {
      const int letters = kind == 0 ? 3 : kind == 1 ? 8 : 64;
      const int longest = kind == 3 ? 6 : 64;
      signatures.push_back(size + ":" + text(random.integer(0, longest), letters) + ":" +
                           text(random.integer(0, longest), letters));
    }
  }
  for (int i = 0; i < 120; ++i) signatures.push_back(signatures[7]);  // a long run of one signature
  const auto prepared = test::prepare_all(signatures);
  for (int threshold : {1, 40}) {
    const auto want = dedup::match_all(prepared, threshold);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(dedup::match_every_pair_gpu(prepared, threshold, 0, nullptr, {}), want) << "threshold " << threshold;
    for (std::size_t budget : {std::size_t{0}, std::size_t{1}, std::size_t{5000}}) {
      const auto whole = dedup::match_indexed_gpu(prepared, threshold, 0, nullptr, {}, budget);
      ASSERT_TRUE(whole.has_value());
      EXPECT_EQ(*whole, want) << "threshold " << threshold << ", budget " << budget;
    }
    dedup::MatchList shared, public_shares;
    for (std::size_t part = 0; part < 3; ++part) {
      const auto mine = dedup::match_indexed_gpu(prepared, threshold, 0, nullptr, {part, 3}, 3000);
      ASSERT_TRUE(mine.has_value());
      shared.insert(shared.end(), mine->begin(), mine->end());
      const auto theirs = dedup::match_all_gpu(prepared, threshold, 0, nullptr, {part, 3});
      public_shares.insert(public_shares.end(), theirs.begin(), theirs.end());
    }
    EXPECT_EQ(test::sorted_by_pair(std::move(shared)), want) << "three shares, threshold " << threshold;
    EXPECT_EQ(test::sorted_by_pair(std::move(public_shares)), want)
        << "three shares through match_all_gpu, threshold " << threshold;

    // Parts 1 and 2 of three dealt in pieces to two workers as they ask (the same GPU
    // twice), part 0 alone: every run merged is the answer.
    const auto plan = dedup::plan_index(prepared);
    ASSERT_NE(plan, nullptr);
    for (const std::size_t pieces : {1u, 2u, 7u}) {
      dedup::RowDealer dealer;
      dealer.held = 2;
      dealer.pieces = pieces;
      std::vector<std::vector<dedup::MatchList>> runs(3);
      run_parts(2, [&](std::size_t w) {
        runs[w] = dedup::match_indexed_runs(*plan, threshold, 0, nullptr, {1, 3}, &dealer, 2000);
      });
      runs[2] = dedup::match_indexed_runs(*plan, threshold, 0, nullptr, {0, 3}, nullptr, 2000);
      std::vector<dedup::MatchList> every;
      for (auto& worker : runs)
        for (auto& run : worker) every.push_back(std::move(run));
      EXPECT_TRUE(dealer.done()) << "every piece taken";
      EXPECT_TRUE(dedup::match_indexed_runs(*plan, threshold, 0, nullptr, {1, 3}, &dealer).empty()) << "none left";
      EXPECT_EQ(dedup::merge_sorted_runs(std::move(every)), want) << pieces << " pieces dealt, threshold " << threshold;
    }
    // The same through match_indexed_dealt: the matches left on the GPUs, spread over them
    // in ranges, each sorted and brought down (a small budget: brought down early too).
    for (const std::size_t budget : {std::size_t{0}, std::size_t{2000}}) {
      std::vector<double> ms;
      EXPECT_EQ(dedup::match_indexed_dealt(*plan, threshold, {0}, {0, 1}, ms, budget), want)
          << "dealt to one worker, budget " << budget << ", threshold " << threshold;
      EXPECT_EQ(dedup::match_indexed_dealt(*plan, threshold, {0, 0}, {0, 2}, ms, budget), want)
          << "dealt to two workers, budget " << budget << ", threshold " << threshold;
      EXPECT_EQ(ms.size(), 2u);
      EXPECT_EQ(dedup::merge_sorted_runs({dedup::match_indexed_dealt(*plan, threshold, {0, 0, 0}, {1, 4}, ms, budget),
                                          dedup::match_indexed_gpu(*plan, threshold, 0, nullptr, {0, 4}, budget)}),
                want)
          << "parts 1-3 of four dealt to three workers, part 0 alone, budget " << budget << ", threshold " << threshold;
    }
    // Two workers of one process through the public call, the plan made here or ahead.
    EXPECT_EQ(dedup::match_shared(prepared, threshold, {0, 0}), want) << "match_shared, threshold " << threshold;
    EXPECT_EQ(dedup::match_shared(prepared, threshold, {0, 0}, nullptr, nullptr, dedup::plan_gpu_match(prepared)), want)
        << "match_shared with its plan made ahead, threshold " << threshold;
    EXPECT_EQ(dedup::match_shared(prepared, threshold, {0}, nullptr, nullptr, dedup::plan_gpu_match(prepared)), want)
        << "match_shared on one GPU with its plan made ahead, threshold " << threshold;
    const auto locked = dedup::plan_gpu_match(prepared);  // its codes locked ahead, as the command line does
    dedup::page_lock_plan(*locked, 0);
    EXPECT_EQ(dedup::match_shared(prepared, threshold, {0, 0}, nullptr, nullptr, locked), want)
        << "match_shared with its plan made and locked ahead, threshold " << threshold;
    // A memory budget: the index's room is the budget. One that holds the index and a few
    // candidate pairs besides (chunks of a few rows), one that holds the index alone (a row
    // a chunk), then one too small (every pair scored).
    const std::size_t index_bytes = dedup::gpu_index_room(*locked, 0).bytes;
    ASSERT_GT(index_bytes, 0u);
    for (const std::size_t budget : {index_bytes + 20000, index_bytes, index_bytes - 1}) {
      const auto budgeted = dedup::plan_gpu_match(prepared, budget);
      const dedup::GpuIndexRoom room = dedup::gpu_index_room(*budgeted, 0);
      EXPECT_EQ(room.bytes, index_bytes);
      EXPECT_EQ(room.room, budget);
      EXPECT_EQ(room.fits(), budget >= index_bytes);
      if (room.fits()) EXPECT_LE(dedup::pair_budget_within(*budgeted->index, budget), 400u) << "a few pairs a chunk";
      EXPECT_EQ(dedup::match_shared(prepared, threshold, {0, 0}, nullptr, nullptr, budgeted), want)
          << "match_shared within " << budget << " bytes, threshold " << threshold;
    }
  }
  EXPECT_TRUE(dedup::index_fits_gpu(prepared, 0));
  // A hand-made part outside base64: no index (every worker alike), and the answer still
  // the CPU's.
  auto odd = prepared;
  ASSERT_TRUE(ctph::prepare("3:abc#defghij:abcdefgh", odd.emplace_back()));
  EXPECT_FALSE(dedup::match_indexed_gpu(odd, 1, 0, nullptr, {}).has_value());
  EXPECT_EQ(dedup::match_all_gpu(odd, 1, 0), dedup::match_all(odd, 1));
  EXPECT_EQ(dedup::gpu_index_room(*dedup::plan_gpu_match(odd), 0).bytes, 0u);
  EXPECT_FALSE(dedup::gpu_index_room(*dedup::plan_gpu_match(odd), 0).fits());
  // A hand-made part longer than 64 characters: no index either.
  auto long_part = prepared;
  long_part.back().first.text.assign(65, 'a');
  EXPECT_FALSE(dedup::match_indexed_gpu(long_part, 1, 0, nullptr, {}).has_value());
  // Too few signatures for a pair, dealt to two workers: none found, none left undone.
  for (const std::size_t count : {0u, 1u}) {
    const std::vector<ctph::Prepared> few(prepared.begin(), prepared.begin() + count);
    std::vector<double> ms;
    EXPECT_TRUE(dedup::match_indexed_dealt(*dedup::plan_index(few), 1, {0, 0}, {0, 2}, ms).empty()) << count;
    EXPECT_TRUE(dedup::match_shared(few, 1, {0, 0}).empty()) << count;
  }
}

TEST(GpuDedup, EditRateEachKernelEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const test::TempDir dir;
  const auto files = test::plant_near_duplicates(dir.path(), test::quick() ? 20 : 60, random);
  dedup::RateOptions options;
  options.rate = 0.05;
  const auto want = dedup::match_rates(files, options);
  test::expect_planted_found(files, want, options.rate);
  for (const auto kernel :
       {dedup::EditKernel::shared_rows, dedup::EditKernel::global_rows, dedup::EditKernel::bit_parallel}) {
    options.device = 0;
    options.kernel = kernel;
    EXPECT_EQ(dedup::match_rates(files, options), want) << static_cast<int>(kernel);
  }
  // The GPU given once the documents are signed (as the command line starts it meanwhile).
  options.device = -1;
  options.devices_when_signed = [] { return std::vector<int>{0}; };
  EXPECT_EQ(dedup::match_rates(files, options), want) << "the GPU given after the signatures";
  options.devices_when_signed = nullptr;
  options.device = 0;
  // Most documents beyond the memory budget: their pairs are verified on the cores.
  options.memory_budget = 4096;
  EXPECT_EQ(dedup::match_rates(files, options), want) << "documents read again";
  // Signature pairs pruned by length in GPU calls of 3 rows (many a group), and not pruned.
  options.memory_budget = 0;
  options.run_rows = 3;
  EXPECT_EQ(dedup::match_rates(files, options), want) << "runs of 3 rows";
  options.prune_by_length = false;
  EXPECT_EQ(dedup::match_rates(files, options), want) << "every pair scored";
}

}  // namespace
}  // namespace simkit
