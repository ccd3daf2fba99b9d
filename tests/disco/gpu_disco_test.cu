// Dense Lin all-pairs on the GPU against the CPU: fp32 within 1e-5, TF32 lists mostly equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "disco_fixture.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"
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
    options.precision = disco::Precision::tf32;
    const TopKLists tf32 = disco::all_pairs(model, options);
    std::size_t overlap = 0;
    for (std::size_t w = 0; w < model.size(); ++w)
      for (const auto i : tf32.row_indices(w))
        for (const auto j : cpu.row_indices(w)) overlap += i == j;
    EXPECT_GE(overlap, cpu.indices.size() * 95 / 100) << "TF32 top-10 overlap";
  }
}

// What a command runs on a thread while it reads the model (dense and sparse, both
// kernels' choice), then the job as usual.
TEST(GpuDisco, PreparedGpuGivesTheSameLists) {
  SIMKIT_REQUIRE_GPU();
  const disco::Model model = sample_model(300);
  disco::AllPairsOptions options;
  options.k = 10;
  const TopKLists cpu = disco::all_pairs(model, options);
  for (const disco::Form form : {disco::Form::dense, disco::Form::sparse}) {
    options.form = form;
    options.device = 0;
    disco::prepare_gpu(options, 0);
    const TopKLists gpu = disco::all_pairs(model, options);
    ASSERT_EQ(gpu.scores.size(), cpu.scores.size());
    for (std::size_t i = 0; i < cpu.scores.size(); ++i) EXPECT_NEAR(gpu.scores[i], cpu.scores[i], 1e-5);
    options.device = -1;
  }
}

// Rows made ahead with their entries page-locked while the GPU starts (what the command
// line does; entries past 16 MB, so that they are locked) give the lists of rows the job
// makes and locks itself, bit for bit.
TEST(GpuDisco, RowsLockedAheadGiveTheSameLists) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  disco::Model model;  // 12,000 words of about 380 random features among 4,000
  model.window = 4;
  model.feature_words = 12000;
  for (std::size_t w = 0; w < 12000; ++w) {
    model.words.push_back("w" + std::to_string(w));
    model.counts.push_back(12000 - w);
    std::vector<std::uint32_t> row;
    for (int i = 0; i < 400; ++i) row.push_back(static_cast<std::uint32_t>(random.integer(0, 3999)));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    double sum = 0;
    for (const std::uint32_t f : row) {
      model.features.push_back(f);
      model.mi.push_back(static_cast<float>(random.integer(1, 5000)) / 1000.0f);
      sum += model.mi.back();
    }
    model.offsets.push_back(model.features.size());
    model.mi_sums.push_back(sum);
  }
  ASSERT_GT(model.features.size() * sizeof(std::uint32_t), std::size_t{16} << 20);
  disco::AllPairsOptions options;
  options.k = 10;
  options.features = 1000;
  options.precision = disco::Precision::tf32;
  options.device = 0;
  const TopKLists plain = disco::all_pairs(model, options);
  const auto prepared = disco::prepare_rows(model, options, true);
  ASSERT_NE(prepared, nullptr);
  disco::page_lock_rows(*prepared, 0);
  disco::page_lock_rows(*prepared, 0);  // (once a process: again, nothing)
  const TopKLists ahead = disco::all_pairs(model, options, nullptr, nullptr, prepared.get());
  EXPECT_EQ(ahead.indices, plain.indices);
  EXPECT_EQ(ahead.scores, plain.scores);
}

// The largest relative difference of a list's scores from formula 3.8 in float64
// (disco::similarity, the sparse merge), over entries with a nonzero score.
double worst_relative_error(const disco::Model& model, const TopKLists& lists) {
  double worst = 0;
  for (std::size_t w = 0; w < model.size(); ++w) {
    const auto indices = lists.row_indices(w);
    const auto scores = lists.row_scores(w);
    for (std::size_t s = 0; s < indices.size() && indices[s] < model.size(); ++s) {
      const double exact = disco::similarity(model, w, indices[s]);
      if (exact > 0) worst = std::max(worst, std::abs(scores[s] - exact) / exact);
    }
  }
  return worst;
}

// The sparse form on the GPU (inverted lists) against the CPU's merges: scores within
// 1e-5 relative, the same lists up to near-ties, and the same bits on every run.
TEST(GpuDisco, SparseEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  const disco::Model model = sample_model(test::quick() ? 400 : 2000);
  disco::AllPairsOptions options;
  options.k = 10;
  options.form = disco::Form::sparse;
  const TopKLists cpu = disco::all_pairs(model, options);
  options.device = 0;
  const TopKLists gpu = disco::all_pairs(model, options);
  ASSERT_EQ(gpu.scores.size(), cpu.scores.size());
  std::size_t same = 0;
  for (std::size_t i = 0; i < cpu.scores.size(); ++i) {
    EXPECT_NEAR(gpu.scores[i], cpu.scores[i], 1e-5 * std::max(1.0f, cpu.scores[i])) << "slot " << i;
    same += gpu.indices[i] == cpu.indices[i];
  }
  EXPECT_GE(same, cpu.indices.size() * 99 / 100);
  EXPECT_LE(worst_relative_error(model, gpu), 1e-5);

  // Blocks of a few rows (many tiles, postings cut at every block edge; room for the
  // lists as they are made): the same bits.
  options.memory_budget = 16u << 20;
  const TopKLists small = disco::all_pairs(model, options);
  options.memory_budget = 0;
  const TopKLists again = disco::all_pairs(model, options);
  EXPECT_EQ(again.scores, gpu.scores);
  EXPECT_EQ(again.indices, gpu.indices);
  for (std::size_t i = 0; i < gpu.scores.size(); ++i) EXPECT_NEAR(small.scores[i], gpu.scores[i], 1e-6);

  // The dense form over every feature is the same job.
  options.form = disco::Form::dense;
  const TopKLists dense = disco::all_pairs(model, options);
  for (std::size_t i = 0; i < gpu.scores.size(); ++i) EXPECT_NEAR(dense.scores[i], gpu.scores[i], 1e-5);
}

// TF32 and fp16 on both scorers, the engine on cuBLAS and simkit's fused self-join (each
// pair multiplied once, the division and the top k in the epilogue), against the CPU:
// each score within the operands' rounding (each term loses at most 2^-9 of itself to
// TF32's truncation, 2^-10 to fp16's rounding, and a Lin score is a ratio of positive
// sums), the lists mostly equal; what the self-join cannot do is refused.
TEST(GpuDisco, TensorCoreScorersMatchTheCpu) {
  SIMKIT_REQUIRE_GPU();
  const bool hopper = !gemm::tensor_tiles().empty();
  for (const auto& [words, features] : {std::pair<std::size_t, std::size_t>{test::quick() ? 300 : 700, 0},
                                        std::pair<std::size_t, std::size_t>{test::quick() ? 600 : 3000, 2000}}) {
    const disco::Model model = sample_model(words);
    disco::AllPairsOptions options;
    options.k = 10;
    options.features = features;
    const TopKLists cpu = disco::all_pairs(model, options);
    options.device = 0;
    for (const disco::Precision precision : {disco::Precision::tf32, disco::Precision::fp16})
      for (const disco::ProductKernel kernel : {disco::ProductKernel::cublas, disco::ProductKernel::simkit}) {
        if (kernel == disco::ProductKernel::simkit && !hopper) continue;
        const bool tf32 = precision == disco::Precision::tf32;
        SCOPED_TRACE(testing::Message() << (tf32 ? "tf32" : "fp16") << " on "
                                        << (kernel == disco::ProductKernel::simkit ? "simkit" : "cuBLAS")
                                        << ", features " << features);
        options.precision = precision;
        options.kernel = kernel;
        const TopKLists gpu = disco::all_pairs(model, options);
        ASSERT_EQ(gpu.scores.size(), cpu.scores.size());
        std::size_t same = 0;
        for (std::size_t i = 0; i < cpu.scores.size(); ++i) {
          EXPECT_NEAR(gpu.scores[i], cpu.scores[i], tf32 ? 4e-3 : 2e-3) << "slot " << i;
          same += gpu.indices[i] == cpu.indices[i];
        }
        EXPECT_GE(same, cpu.indices.size() * 95 / 100);
      }
  }
  if (!hopper) return;
  const disco::Model model = sample_model(100);
  disco::AllPairsOptions options;
  options.device = 0;
  options.kernel = disco::ProductKernel::simkit;
  EXPECT_THROW(disco::all_pairs(model, options), UsageError);  // fp32
  options.precision = disco::Precision::fp16;
  options.k = gemm::kMaxSelfTop + 1;
  EXPECT_THROW(disco::all_pairs(model, options), UsageError);  // k past the self-join's
  options.k = 10;
  options.memory_budget = 1 << 10;  // no room for resident rows: fp16 needs them, and so does the self-join
  EXPECT_THROW(disco::all_pairs(model, options), UsageError);
  options.precision = disco::Precision::tf32;
  EXPECT_THROW(disco::all_pairs(model, options), UsageError);
  options.precision = disco::Precision::fp16;
  // auto takes whichever measures faster, and either gives the fused lists' scores.
  options.memory_budget = 0;
  const TopKLists fused = disco::all_pairs(model, options);
  options.kernel = disco::ProductKernel::automatic;
  const TopKLists chosen = disco::all_pairs(model, options);
  for (std::size_t i = 0; i < fused.scores.size(); ++i) EXPECT_NEAR(chosen.scores[i], fused.scores[i], 2e-3);
}

// What the dense form's scorer said on standard error (SIMKIT_ENGINE_STATS) while it
// scored `model`: its columns kept and entries listed.
std::string scorer_line(const disco::Model& model, const disco::AllPairsOptions& options, TopKLists& lists) {
  const test::ScopedEnv stats("SIMKIT_ENGINE_STATS", "1");
  testing::internal::CaptureStderr();
  try {
    lists = disco::all_pairs(model, options);
  } catch (...) {
    testing::internal::GetCapturedStderr();
    throw;
  }
  return testing::internal::GetCapturedStderr();
}

// The dense form's rarer columns summed from inverted lists beside the product of the
// common ones (SIMKIT_DISCO_PRODUCT_COLUMNS forcing how many the product takes, from one
// to all): the CPU's lists and scores, in fp32 within 1e-5, in TF32 and fp16 within the
// operands' rounding, for Lin and PPMI's cosine, in tiles of 4,096 and of 512 words (the
// scorer's line checked for the columns kept and entries listed); the same split twice
// gives the same bits.
TEST(GpuDisco, ListedColumnsGiveTheCpusLists) {
  SIMKIT_REQUIRE_GPU();
  for (const disco::Measure measure : {disco::Measure::lin, disco::Measure::ppmi}) {
    disco::BuildOptions build;
    build.words = test::quick() ? 500 : 2500;
    build.measure = measure;
    const disco::Model model =
        disco::build({(test::source_dir() / "data/samples/postings/brown-sample.txt").string()}, build);
    disco::AllPairsOptions options;
    options.k = 10;
    options.features = 1500;
    const TopKLists cpu = disco::all_pairs(model, options);
    options.device = 0;
    for (const std::size_t columns : {std::size_t{1}, std::size_t{100}, std::size_t{700}, std::size_t{1500}}) {
      const test::ScopedEnv product_columns("SIMKIT_DISCO_PRODUCT_COLUMNS", std::to_string(columns).c_str());
      for (const disco::Precision precision : {disco::Precision::fp32, disco::Precision::tf32, disco::Precision::fp16}) {
        SCOPED_TRACE(testing::Message() << disco::measure_name(measure) << ", " << columns << " columns in the product, "
                                        << static_cast<int>(precision));
        options.precision = precision;
        options.kernel = disco::ProductKernel::cublas;
        const TopKLists gpu = disco::all_pairs(model, options);
        ASSERT_EQ(gpu.scores.size(), cpu.scores.size());
        const double tolerance = precision == disco::Precision::fp32 ? 1e-5 : 4e-3;
        std::size_t same = 0;
        for (std::size_t i = 0; i < cpu.scores.size(); ++i) {
          EXPECT_NEAR(gpu.scores[i], cpu.scores[i], tolerance) << "slot " << i;
          same += gpu.indices[i] == cpu.indices[i];
        }
        EXPECT_GE(same, cpu.indices.size() * (precision == disco::Precision::fp32 ? 99 : 95) / 100);
        const TopKLists again = disco::all_pairs(model, options);
        EXPECT_EQ(again.scores, gpu.scores);
        EXPECT_EQ(again.indices, gpu.indices);
        if (precision != disco::Precision::tf32) continue;
        // Score tiles of 512 x 512 (many tiles: lists cut at every tile's edge).
        TopKLists small;
        std::string said;
        {
          const test::ScopedEnv tiles("SIMKIT_GPU_TILE_MB", "1");
          said = scorer_line(model, options, small);
        }
        // (The sample's models have all 1,500 columns.)
        EXPECT_NE(said.find("columns in the product " + std::to_string(columns) + " of 1500"), std::string::npos) << said;
        if (columns < options.features) EXPECT_EQ(said.find(" (0 listed entries)"), std::string::npos) << said;
        for (std::size_t i = 0; i < cpu.scores.size(); ++i) EXPECT_NEAR(small.scores[i], cpu.scores[i], tolerance);
      }
    }
  }
}

// A model of 5,000 words (more than a tile's 4,096) with features drawn Zipf-like from
// 1,000, as a corpus gives: the scorer chooses by itself to list the rarer columns, and
// its lists are the CPU's (fp32 within 1e-5), over tiles cut at 4,096 words and slices of
// 1,024; a budget too small for the reduced rows falls back to blocks built on the host
// with every column, with the same lists.
TEST(GpuDisco, ListedColumnsChosenByThemselves) {
  SIMKIT_REQUIRE_GPU();
  constexpr std::size_t kWords = 5000, kColumns = 1000, kDraws = 40;
  const std::uint64_t seed = 20261128;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  disco::Model model;
  model.feature_words = kColumns;
  std::vector<std::uint32_t> row;
  for (std::size_t w = 0; w < kWords; ++w) {
    model.words.push_back("w" + std::to_string(w));
    model.counts.push_back(kWords - w);
    row.clear();
    for (std::size_t i = 0; i < kDraws; ++i)  // column floor(F^u) - 1: Zipf-like
      row.push_back(static_cast<std::uint32_t>(std::pow(static_cast<double>(kColumns), u(rng))) - 1);
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    double sum = 0, squares = 0;
    for (const std::uint32_t f : row) {
      const float mi = static_cast<float>(0.05 + 4.0 * u(rng));
      model.features.push_back(f);
      model.mi.push_back(mi);
      sum += mi;
      squares += static_cast<double>(mi) * mi;
    }
    model.offsets.push_back(model.features.size());
    model.mi_sums.push_back(sum);
    model.norms.push_back(std::sqrt(squares));
  }
  disco::AllPairsOptions options;
  options.k = 10;
  const TopKLists cpu = disco::all_pairs(model, options);
  options.device = 0;
  TopKLists gpu;
  const std::string said = scorer_line(model, options, gpu);
  EXPECT_EQ(said.find(" (0 listed entries)"), std::string::npos) << said;  // lists were made
  EXPECT_NE(said.find("listed entries)"), std::string::npos) << said;
  ASSERT_EQ(gpu.scores.size(), cpu.scores.size());
  std::size_t same = 0;
  for (std::size_t i = 0; i < cpu.scores.size(); ++i) {
    EXPECT_NEAR(gpu.scores[i], cpu.scores[i], 1e-5) << "slot " << i;
    same += gpu.indices[i] == cpu.indices[i];
  }
  EXPECT_GE(same, cpu.indices.size() * 99 / 100);
  // The reduced rows and their lists need more than 4 MiB: blocks built on the host.
  options.memory_budget = 8u << 20;
  const TopKLists blocks = disco::all_pairs(model, options);
  for (std::size_t i = 0; i < cpu.scores.size(); ++i) EXPECT_NEAR(blocks.scores[i], cpu.scores[i], 1e-5);
  // A count of columns that is not one is refused with the variable's name.
  const test::ScopedEnv bad("SIMKIT_DISCO_PRODUCT_COLUMNS", "12x");
  options.memory_budget = 0;
  try {
    disco::all_pairs(model, options);
    ADD_FAILURE() << "a bad SIMKIT_DISCO_PRODUCT_COLUMNS was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("SIMKIT_DISCO_PRODUCT_COLUMNS"), std::string::npos);
  }
}

// fp32 on resident rows is split TF32 (A = hi + lo): as accurate as fp32 on the CUDA
// cores, where TF32 alone is not.
TEST(GpuDisco, SplitTf32HasFp32Accuracy) {
  SIMKIT_REQUIRE_GPU();
  const disco::Model model = sample_model(test::quick() ? 300 : 1000);
  disco::AllPairsOptions options;
  options.k = 10;
  options.device = 0;
  const TopKLists split = disco::all_pairs(model, options);
  TopKLists cores;
  {
    struct CudaCores {  // SIMKIT_DISCO_FP32=cores for this scope, also when it throws
      CudaCores() { setenv("SIMKIT_DISCO_FP32", "cores", 1); }
      ~CudaCores() { unsetenv("SIMKIT_DISCO_FP32"); }
    } on_cuda_cores;
    cores = disco::all_pairs(model, options);
  }
  options.precision = disco::Precision::tf32;
  const TopKLists tf32 = disco::all_pairs(model, options);

  const double split_error = worst_relative_error(model, split);
  const double cores_error = worst_relative_error(model, cores);
  const double tf32_error = worst_relative_error(model, tf32);
  EXPECT_LE(split_error, 1e-5);
  EXPECT_LE(cores_error, 1e-5);
  EXPECT_GE(tf32_error, 10 * split_error) << "TF32 alone should be visibly less accurate";
  std::size_t same = 0;
  for (std::size_t i = 0; i < cores.indices.size(); ++i) same += split.indices[i] == cores.indices[i];
  EXPECT_GE(same, cores.indices.size() * 99 / 100);  // near-ties may swap
}

// The window pairs counted on the GPU give the CPU's model bit for bit (the counts are
// integers: the same counts, the same floats): both measures, windows 2 to 9, distance
// weights, stop words, rare words, fewer rows than words, subsampling, and a budget so
// small that the device counts in chunks of 4,096 tokens and the host spills its runs.
TEST(GpuDisco, PairCountsEqualTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 2000; ++i) vocabulary.push_back(i % 97 == 0 ? "the" : "w" + std::to_string(i));
  std::string text;
  const std::size_t size = test::quick() ? (std::size_t{1} << 19) : (std::size_t{2} << 20);
  while (text.size() < size) {
    const int n = random.integer(0, 30);
    for (int i = 0; i < n; ++i)
      text += vocabulary[std::min(random.integer(0, 1999), random.integer(0, 1999))] + (i + 1 < n ? " " : "");
    text += random.integer(0, 9) == 0 ? " . \n" : "\n";
  }
  test::TempDir dir;
  test::write_file(dir / "c.txt", text);
  for (int trial = 0; trial < 8; ++trial) {
    disco::BuildOptions options;
    options.measure = trial % 2 == 0 ? disco::Measure::ppmi : disco::Measure::lin;
    options.window = 2 + trial;
    options.ppmi.weighted = trial % 4 == 0;
    options.stopwords = trial % 3 == 0 ? "english" : "none";
    options.min_count = trial % 3 == 1 ? 3 : 1;
    options.words = trial == 3 ? 300 : 0;
    options.subsample = trial == 4 || trial == 7 ? 1e-3 : 0;
    options.memory_budget = trial >= 6 ? 1 : 0;
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    const disco::Model cpu = disco::build({(dir / "c.txt").string()}, options);
    options.device = 0;
    const disco::Model gpu = disco::build({(dir / "c.txt").string()}, options);
    ASSERT_GT(cpu.features.size(), 0u);
    test::expect_same_model(gpu, cpu);
    options.device = -1;
    options.device_after_first_pass = [] { return 0; };
    test::expect_same_model(disco::build({(dir / "c.txt").string()}, options), cpu);
  }
}

}  // namespace
}  // namespace simkit
