// GLVQ on the GPU against the CPU: one batch against the float64 reference, and the
// learning curves on the real digits sample (loss within 1e-4 relative per epoch, test
// error within 0.1 percentage point) for every distance kernel and both searches, batch
// sizes from SGD up, and a training set streamed from the host.
#include <gtest/gtest.h>

#include <numeric>

#include "lvq/trainer.hpp"
#include "lvq_fixture.hpp"
#include "simkit/device.hpp"
#include "simkit/lvq.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// One batch of `batch` random samples on the GPU(s) of `options` against the float64
// reference: prototypes within 1e-4 relative, losses within 1e-5.
void expect_one_batch_equals_reference(test::Random& random, lvq::TrainOptions options, std::size_t batch) {
  const lvq::Dataset data = test::blobs(random, 40, 37, 5);
  options.per_class = 2;
  options.batch = batch;
  const lvq::Model model = lvq::initial_model(data, options);
  std::vector<std::uint32_t> order(data.rows);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), random.engine());
  order.resize(batch);
  auto trainer = lvq::detail::gpu_trainer(data, model, options);
  std::vector<float> losses(batch);
  std::vector<std::uint8_t> errors(batch);
  const std::vector<float> etas{0.5f};
  trainer->epoch(order, batch, etas, losses.data(), errors.data());
  std::vector<double> expected(model.prototypes.begin(), model.prototypes.end());
  const auto expected_losses = test::reference_batch(data, 2, order, 0.5, options.xi, expected);
  std::vector<float> got(model.prototypes.size());
  trainer->read_prototypes(got.data());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-4 * (1 + std::fabs(expected[i]))) << "mb " << batch << " at " << i;
  for (std::size_t i = 0; i < batch; ++i) EXPECT_NEAR(losses[i], expected_losses[i], 1e-5);
}

TEST(GpuLvq, OneBatchEqualsTheFloat64Reference) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (const lvq::Kernel kernel : {lvq::Kernel::reduction, lvq::Kernel::gemm})
    for (const std::size_t batch : {1, 9, 40}) {
      lvq::TrainOptions options;
      options.device = 0;
      options.kernel = kernel;
      expect_one_batch_equals_reference(random, options, batch);
    }
}

TEST(GpuLvq, LearningCurvesEqualTheCpu) {
  SIMKIT_REQUIRE_GPU();
  const lvq::Dataset train = test::digits("train");
  const lvq::Dataset test_set = test::digits("test");
  struct Case {
    std::size_t batch;
    lvq::Kernel kernel;
    std::size_t budget;
    lvq::Search search = lvq::Search::reduction;
  };
  const std::vector<Case> cases = {{1, lvq::Kernel::automatic, 0},
                                   {16, lvq::Kernel::reduction, 0},
                                   {16, lvq::Kernel::gemm, 0},
                                   {256, lvq::Kernel::automatic, 0},
                                   {1024, lvq::Kernel::gemm, 0},  // CUB's sort (2048 entries) and the small one
                                   {32, lvq::Kernel::gemm, 0, lvq::Search::compare},
                                   {64, lvq::Kernel::gemm, 64u << 10}};  // streamed from the host, tiled
  for (const Case& c : cases) {
    lvq::TrainOptions options;
    options.per_class = 2;
    options.epochs = test::quick() ? 3 : 10;
    options.batch = c.batch;
    std::vector<lvq::EpochStats> cpu, gpu;
    const lvq::Model a = lvq::train(train, &test_set, options, [&](const lvq::EpochStats& e) { cpu.push_back(e); });
    options.device = 0;
    options.kernel = c.kernel;
    options.memory_budget = c.budget;
    options.search = c.search;
    const lvq::Model b = lvq::train(train, &test_set, options, [&](const lvq::EpochStats& e) { gpu.push_back(e); });
    ASSERT_EQ(cpu.size(), gpu.size());
    for (std::size_t e = 0; e < cpu.size(); ++e) {
      EXPECT_NEAR(gpu[e].loss, cpu[e].loss, 1e-4 * cpu[e].loss) << "mb " << c.batch << " epoch " << e + 1;
      EXPECT_NEAR(gpu[e].test_error, cpu[e].test_error, 0.001) << "mb " << c.batch << " epoch " << e + 1;
    }
    for (std::size_t i = 0; i < a.prototypes.size(); ++i)
      ASSERT_NEAR(b.prototypes[i], a.prototypes[i], 1e-2 * (1 + std::fabs(a.prototypes[i]))) << "mb " << c.batch;
  }
}

TEST(GpuLvq, PredictEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const lvq::Dataset train = test::digits("train");
  const lvq::Dataset test_set = test::digits("test");
  lvq::TrainOptions options;
  options.per_class = 3;
  options.epochs = 3;
  options.standardize = true;
  const lvq::Model model = lvq::train(train, nullptr, options);
  const lvq::Dataset blobs = test::blobs(random, 3000, 64, 10);
  for (const lvq::Dataset* data : {&test_set, &blobs}) {
    const auto cpu = lvq::predict(model, *data, 3);
    const auto gpu = lvq::predict(model, *data, 3, 0);
    ASSERT_EQ(gpu.size(), cpu.size());
    std::size_t same = 0;
    for (std::size_t i = 0; i < cpu.size(); ++i) same += gpu[i] == cpu[i];
    EXPECT_GE(same, cpu.size() * 995 / 1000);  // BLAS and cuBLAS round near-ties apart
  }
}

// Every GPU of the machine as workers of one process (options.devices, NCCL between
// them): one batch against the float64 reference, then learning curves and predictions
// on the digits sample against one GPU (cuBLAS may round a row's distances differently at
// another row count, so the tolerances of GPU against CPU).
TEST(GpuLvq, SeveralGpusEqualOne) {
  SIMKIT_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs";
  std::vector<int> all(static_cast<std::size_t>(cuda_device_count()));
  std::iota(all.begin(), all.end(), 0);
  test::Random random;
  SCOPED_TRACE(random.seed());
  lvq::TrainOptions on_all;
  on_all.device = 0;
  on_all.devices = all;
  for (const std::size_t batch : {1, 3, 40})  // a batch of 1: one worker scores, the others wait
    expect_one_batch_equals_reference(random, on_all, batch);

  const lvq::Dataset train = test::digits("train");
  const lvq::Dataset test_set = test::digits("test");
  for (const std::size_t batch : {16, 1024}) {  // the small sort and CUB's
    lvq::TrainOptions options;
    options.per_class = 2;
    options.epochs = test::quick() ? 3 : 10;
    options.batch = batch;
    options.device = 0;
    options.kernel = lvq::Kernel::gemm;
    std::vector<lvq::EpochStats> one, several;
    const lvq::Model a = lvq::train(train, &test_set, options, [&](const lvq::EpochStats& e) { one.push_back(e); });
    options.devices = all;
    const lvq::Model b = lvq::train(train, &test_set, options, [&](const lvq::EpochStats& e) { several.push_back(e); });
    ASSERT_EQ(several.size(), one.size());
    for (std::size_t e = 0; e < one.size(); ++e) {
      EXPECT_NEAR(several[e].loss, one[e].loss, 1e-4 * one[e].loss) << "mb " << batch << " epoch " << e + 1;
      EXPECT_NEAR(several[e].test_error, one[e].test_error, 0.002) << "mb " << batch << " epoch " << e + 1;
    }
    for (std::size_t i = 0; i < a.prototypes.size(); ++i)
      ASSERT_NEAR(b.prototypes[i], a.prototypes[i], 1e-2 * (1 + std::fabs(a.prototypes[i]))) << "mb " << batch;
    // Prediction shared among the GPUs: one GPU's answer, row for row (a row may turn
    // where cuBLAS rounds a near-tie apart at the other row count: at most one here).
    const auto shared = lvq::predict_distributed(a, test_set, 3, all);
    const auto single = lvq::predict(a, test_set, 3, 0);
    ASSERT_EQ(shared.size(), single.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < single.size(); ++i) differ += shared[i] != single[i];
    EXPECT_LE(differ, 1u) << "mb " << batch;
  }
}

}  // namespace
}  // namespace simkit
