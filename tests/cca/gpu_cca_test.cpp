// The CCA tracker on the GPU against the CPU path: the same correlations (within 1e-9,
// both float64, one step at a time; within 1e-8 for the batched solver, whose route is
// another: Schur complement, tridiagonalisation, 1 - rho^2) at every step of the real
// digit stream and of synthetic ones, the same canonical vectors, the same approx samples,
// many streams, and the same refusal of a singular window, at the step where it occurs.
#include <gtest/gtest.h>

#include "cca_fixture.hpp"
#include "simkit/cca.hpp"
#include "simkit/error.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

void expect_same(const std::vector<cca::Report>& cpu, const std::vector<cca::Report>& gpu, double tolerance) {
  ASSERT_EQ(cpu.size(), gpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(cpu[i].t, gpu[i].t);
    ASSERT_EQ(cpu[i].recomputed, gpu[i].recomputed) << "t " << cpu[i].t;
    ASSERT_EQ(cpu[i].pairs.size(), gpu[i].pairs.size());
    for (std::size_t p = 0; p < cpu[i].pairs.size(); ++p) {
      const cca::PairResult &a = cpu[i].pairs[p], &b = gpu[i].pairs[p];
      ASSERT_EQ(a.a_kept, b.a_kept);
      ASSERT_EQ(a.b_kept, b.b_kept);
      for (std::size_t j = 0; j < a.rho.size(); ++j) ASSERT_NEAR(a.rho[j], b.rho[j], tolerance) << "t " << cpu[i].t;
      ASSERT_EQ(a.a_vectors.size(), b.a_vectors.size());
      for (std::size_t j = 0; j < a.a_vectors.size(); ++j)
        ASSERT_NEAR(a.a_vectors[j], b.a_vectors[j], 1e-6 * (1 + std::fabs(a.a_vectors[j]))) << "t " << cpu[i].t;
      for (std::size_t j = 0; j < a.b_vectors.size(); ++j)
        ASSERT_NEAR(a.b_vectors[j], b.b_vectors[j], 1e-6 * (1 + std::fabs(a.b_vectors[j]))) << "t " << cpu[i].t;
    }
  }
}

std::pair<std::vector<cca::Report>, std::vector<cca::Report>> both(const cca::Layout& layout, cca::Options options,
                                                                   const std::vector<double>& stream,
                                                                   std::size_t chunk = 97) {
  options.device = -1;
  auto cpu = test::track(layout, options, stream, chunk);
  options.device = 0;
  auto gpu = test::track(layout, options, stream, chunk);
  return {std::move(cpu), std::move(gpu)};
}

TEST(GpuCca, EqualsTheCpuAtEveryStepOfTheDigitStream) {
  SIMKIT_REQUIRE_GPU();
  std::size_t count = 0;
  const std::vector<double> stream = test::digit_halves(count);
  cca::Options options;
  options.window = 200;
  options.k = 5;
  options.ridge = 1e-2;
  options.batch = 1;
  auto [cpu, gpu] = both({{32, 32}}, options, stream);
  expect_same(cpu, gpu, 1e-9);
  // Batched, and the batch reference at every step.
  options.batch = 0;
  std::tie(cpu, gpu) = both({{32, 32}}, options, stream);
  expect_same(cpu, gpu, 1e-8);
  test::expect_equal_to_batch(gpu, stream, 32, 32, 200, 1e-2);
}

TEST(GpuCca, BatchedStepsAtManyShapesBatchSizesAndChunks) {
  // Either side the smaller, several Cholesky panels on both, plain CCA and a ridge,
  // batches cut by the batch size, by the end of each push and by recomputation.
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  struct Case {
    std::size_t p, q, window, every, k, batch, chunk, recenter;
    double ridge;
    std::size_t check_every = 1;  // steps checked against the batch reference
  };
  // One to five panels of the blocked Cholesky on a side (64 wide; 140 x 300 has two
  // outer panels of 256 columns, so a trailing update between them).
  for (const Case& c : {Case{70, 150, 400, 1, 4, 0, 97, 0, 0.0}, Case{150, 70, 400, 3, 6, 7, 250, 0, 1e-3},
                        Case{9, 5, 60, 1, 5, 2, 1, 0, 0.0}, Case{33, 64, 150, 2, 3, 128, 1000, 230, 1e-2},
                        Case{1, 1, 10, 1, 1, 0, 13, 0, 0.0}, Case{2, 3, 12, 1, 2, 0, 29, 0, 0.0},
                        Case{140, 300, 600, 1, 5, 0, 211, 0, 0.0, 25}}) {
    // compute-sanitizer runs: the small shapes, a few dozen steps.
    if (test::quick() && c.p * c.q > 10000) continue;
    const std::size_t count = test::quick() ? c.window + 60 : 1000;
    SCOPED_TRACE(testing::Message() << "p " << c.p << " q " << c.q << " batch " << c.batch);
    const std::vector<double> stream = test::linear_stream(random, count, c.p, c.q, 4);
    cca::Options options;
    options.window = c.window;
    options.every = c.every;
    options.k = c.k;
    options.ridge = c.ridge;
    options.batch = c.batch;
    options.recenter = c.recenter;
    const auto [cpu, gpu] = both({{c.p, c.q}}, options, stream, c.chunk);
    ASSERT_EQ(gpu.size(), (count - c.window) / c.every + 1);
    expect_same(cpu, gpu, 1e-8);
    test::expect_equal_to_batch(gpu, stream, c.p, c.q, c.window, c.ridge, c.check_every);
  }
}

TEST(GpuCca, BatchedStepsReportUpToASingularWindowThenRefuseIt) {
  // The first singular window (tuple 580) falls in the middle of the fourth batch; every
  // step before it is reported.
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::size_t p = 6, q = 8;
  const std::vector<double> stream = test::stream_turning_singular(random, p, q);
  cca::Options options;
  options.k = 2;
  options.device = 0;
  test::expect_equal_to_batch(test::expect_refused_at_580({{p, q}}, options, stream), stream, p, q, 80, 0.0);
}

TEST(GpuCca, EqualsTheCpuOnLinearStreamsWithVectorsSkipAndApprox) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (const auto& [p, q] : {std::pair<std::size_t, std::size_t>{40, 25}, {25, 60}}) {
    const std::vector<double> stream = test::linear_stream(random, 1500, p, q, 4);
    cca::Options options;
    options.window = 300;
    options.every = 7;
    options.k = 3;
    options.vectors = true;
    auto [cpu, gpu] = both({{p, q}}, options, stream);
    expect_same(cpu, gpu, 1e-9);
    options.vectors = false;
    options.every = 1;
    options.skip = 0.05;
    std::tie(cpu, gpu) = both({{p, q}}, options, stream);
    expect_same(cpu, gpu, 1e-9);
    options.skip = -1;
    options.every = 50;
    options.mode = cca::Mode::approx;
    options.epsilon = 0.9;
    options.alpha = 0.5;
    std::tie(cpu, gpu) = both({{p, q}}, options, stream);
    expect_same(cpu, gpu, 1e-9);
  }
}

TEST(GpuCca, ManyStreamsAndLargeBatches) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::vector<double> stream = test::linear_stream(random, 6000, 30, 20, 3);
  cca::Options options;
  options.window = 2500;  // more than a GPU upload chunk of rows per recomputation
  options.every = 500;
  options.k = 2;
  options.recenter = 3000;
  auto [cpu, gpu] = both({{10, 15, 25}}, options, stream);
  expect_same(cpu, gpu, 1e-8);
  options.batch = 1;
  std::tie(cpu, gpu) = both({{10, 15, 25}}, options, stream);
  expect_same(cpu, gpu, 1e-9);
}

TEST(GpuCca, RefusesASingularWindowAsTheCpuDoes) {
  SIMKIT_REQUIRE_GPU();
  std::size_t count = 0;
  const std::vector<double> stream = test::digit_halves(count);
  cca::Options options;
  options.window = 200;
  options.device = 0;
  const std::string message = test::input_error_of([&] { test::track({{32, 32}}, options, stream); });
  EXPECT_NE(message.find("tuple 200"), std::string::npos) << message;
  EXPECT_NE(message.find("singular covariance of X"), std::string::npos) << message;
}

}  // namespace
}  // namespace simkit
