// The GPU paths of simkit dedup against the CPU's: ssdeep matching (match_all_gpu) on
// real signatures, planted near-duplicates and signatures made to be hard, and the
// edit-rate pipeline through each signature kernel.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dedup_fixture.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

std::vector<ctph::Prepared> prepare_all(const std::vector<std::string>& signatures) {
  std::vector<ctph::Prepared> out(signatures.size());
  for (std::size_t i = 0; i < signatures.size(); ++i) EXPECT_TRUE(ctph::prepare(signatures[i], out[i])) << signatures[i];
  return out;
}

TEST(GpuDedup, SsdeepMatchingEqualsTheCpuOnRealFiles) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const test::TempDir dir;
  const auto files = test::plant_near_duplicates(dir.path(), test::quick() ? 100 : 1500, random);
  const auto prepared = prepare_all(dedup::hash_files(files, nullptr));
  for (int threshold : {1, 50, 100}) {
    const auto want = dedup::match_all(prepared, threshold);
    EXPECT_EQ(dedup::match_all_gpu(prepared, threshold, 0), want) << "threshold " << threshold;
    if (threshold == 1) { EXPECT_GE(want.size(), files.size() / 4); }
  }
}

// Every length 0..64 of both parts, three block sizes (and 0), identical signatures, common
// substrings only just 7 long, few letters (long LCS), runs cut to three.
TEST(GpuDedup, SsdeepMatchingEqualsTheCpuOnHardSignatures) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  const auto text = [&](int length, int letters) { return test::random_base64(random, length, letters); };
  std::vector<std::string> signatures;
  const int n = test::quick() ? 600 : 3000;
  for (int i = 0; i < n; ++i) {
    const std::string size = std::to_string(i % 97 == 5 ? 0 : 3 << random.integer(0, 2));  // 0: hand-made lists
    if (i % 5 == 4) {
      const std::string copy = signatures[random.integer(0, i - 1)];
      signatures.push_back(copy);
    } else {
      const int letters = i % 5 == 0 ? 2 : i % 5 == 1 ? 5 : 64;
      signatures.push_back(size + ":" + text(random.integer(0, 64), letters) + ":" + text(random.integer(0, 64), letters));
    }
  }
  const auto prepared = prepare_all(signatures);
  for (int threshold : {1, 30, 90}) {
    const auto want = dedup::match_all(prepared, threshold);
    EXPECT_EQ(dedup::match_all_gpu(prepared, threshold, 0), want) << "threshold " << threshold;
    EXPECT_FALSE(want.empty());
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
}

}  // namespace
}  // namespace simkit
