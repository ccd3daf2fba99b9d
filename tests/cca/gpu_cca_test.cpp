// The CCA tracker on the GPU against the CPU path: the same correlations (within 1e-9,
// both float64) at every step of the real digit stream and of synthetic ones, the same
// canonical vectors, the same approx samples, many streams, and the same refusal of a
// singular window.
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
                                                                   const std::vector<double>& stream) {
  options.device = -1;
  auto cpu = test::track(layout, options, stream);
  options.device = 0;
  auto gpu = test::track(layout, options, stream);
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
  const auto [cpu, gpu] = both({{32, 32}}, options, stream);
  expect_same(cpu, gpu, 1e-9);
  // and the batch reference too
  for (std::size_t i = 0; i < gpu.size(); i += 97) {
    const auto expected = test::batch_cca(stream, 64, gpu[i].t - 200, 200, 32, 32, 1e-2, 5);
    for (std::size_t j = 0; j < 5; ++j) EXPECT_NEAR(gpu[i].pairs[0].rho[j], expected[j], 1e-6);
  }
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
  const auto [cpu, gpu] = both({{10, 15, 25}}, options, stream);
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
