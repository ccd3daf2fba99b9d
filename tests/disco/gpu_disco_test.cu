// Dense Lin all-pairs on the GPU against the CPU: fp32 within 1e-5, TF32 lists mostly equal.
#include <gtest/gtest.h>

#include "disco_fixture.hpp"
#include "simkit/disco.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

using test::sample_model;

TEST(GpuDisco, DenseEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  // Every feature (wide rows) on a few words; a reduced form on more words.
  for (const auto& [words, features] : {std::pair<std::size_t, std::size_t>{test::quick() ? 200 : 600, 0},
                                        std::pair<std::size_t, std::size_t>{test::quick() ? 500 : 3000, 2000}}) {
    const disco::Model model = sample_model(words);
    disco::AllPairsOptions options;
    options.k = 10;
    options.features = features;
    const TopKLists cpu = disco::all_pairs(model, options);
    options.device = 0;
    double ms = -1;
    const TopKLists gpu = disco::all_pairs(model, options, nullptr, &ms);
    EXPECT_GE(ms, 0.0);
    ASSERT_EQ(gpu.scores.size(), cpu.scores.size());
    std::size_t same = 0;
    for (std::size_t i = 0; i < cpu.scores.size(); ++i) {
      EXPECT_NEAR(gpu.scores[i], cpu.scores[i], 1e-5) << "slot " << i << ", features " << features;
      same += gpu.indices[i] == cpu.indices[i];
    }
    EXPECT_GE(same, cpu.indices.size() * 99 / 100) << "features " << features;  // near-ties may swap

    // A budget so small that B is not resident and A comes in many blocks.
    options.memory_budget = 8u << 20;
    const TopKLists small = disco::all_pairs(model, options);
    for (std::size_t i = 0; i < cpu.scores.size(); ++i) EXPECT_NEAR(small.scores[i], cpu.scores[i], 1e-5);

    options.memory_budget = 0;
    options.tf32 = true;
    const TopKLists tf32 = disco::all_pairs(model, options);
    std::size_t overlap = 0;
    for (std::size_t w = 0; w < model.size(); ++w)
      for (const auto i : tf32.row_indices(w))
        for (const auto j : cpu.row_indices(w)) overlap += i == j;
    EXPECT_GE(overlap, cpu.indices.size() * 95 / 100) << "TF32 top-10 overlap";
  }
}

}  // namespace
}  // namespace simkit
