// simkit embed on a GPU against the CPU: the same randomized SVD (the same test matrix,
// cuSPARSE/cuSOLVER/cuBLAS in place of Eigen/LAPACK) up to each pair's sign and rounding,
// hence word vectors whose similarities equal the CPU's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "embed_fixture.hpp"
#include "simkit/embed.hpp"
#include "simkit/neighbors.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// The singular values within `tolerance` relative of the CPU's, and each (u_i, v_i) the
// CPU's up to one common sign.
void expect_same_triplets(const embed::Svd& gpu, const embed::Svd& cpu, double tolerance) {
  ASSERT_EQ(gpu.rank, cpu.rank);
  ASSERT_EQ(gpu.u.size(), cpu.u.size());
  ASSERT_EQ(gpu.v.size(), cpu.v.size());
  const std::size_t k = cpu.rank;
  for (std::size_t i = 0; i < k; ++i) {
    EXPECT_NEAR(gpu.s[i], cpu.s[i], tolerance * cpu.s[0]) << "singular value " << i;
    double du = 0, dv = 0;
    for (std::size_t r = 0; r < cpu.rows; ++r) du += double{gpu.u[r * k + i]} * cpu.u[r * k + i];
    for (std::size_t c = 0; c < cpu.cols; ++c) dv += double{gpu.v[c * k + i]} * cpu.v[c * k + i];
    EXPECT_NEAR(std::abs(du), 1.0, 10 * tolerance) << "left vector " << i;
    EXPECT_NEAR(du * dv, 1.0, 10 * tolerance) << "the signs of u and v " << i;
  }
}

TEST(GpuEmbed, SvdEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::SparseMatrix m = test::SparseMatrix::decaying(500, 300, 40, 0.6, random);
  embed::SvdOptions options;
  options.rank = 12;
  for (const int q : {0, 2}) {
    options.power_iterations = q;
    const embed::Svd cpu = embed::truncated_svd(m.view(), options);
    options.device = 0;
    const embed::Svd gpu = embed::truncated_svd(m.view(), options);
    options.device = -1;
    EXPECT_GE(gpu.device_ms, 0.0);
    SCOPED_TRACE(testing::Message() << "q " << q);
    expect_same_triplets(gpu, cpu, 1e-4);
  }
}

// Word vectors of a real PPMI matrix: every pair's cosine similarity within 2e-3 of the
// CPU's (near-equal singular values may mix their vectors a little; the similarities,
// sums over all dimensions, barely move), and the nearest neighbours mostly the same.
TEST(GpuEmbed, VectorsGiveTheCpusSimilarities) {
  SIMKIT_REQUIRE_GPU();
  const disco::Model model = test::sample_ppmi_model();
  embed::Options options = embed::default_options();
  options.svd.rank = test::quick() ? 32 : 100;
  const neighbors::Model cpu = embed::as_model(embed::vectors(model, options));
  options.svd.device = 0;
  embed::prepare_device(options.svd);  // as embed readies the device while it counts
  const neighbors::Model gpu = embed::as_model(embed::vectors(model, options));
  ASSERT_EQ(gpu.rows, cpu.rows);
  const std::uint32_t words = static_cast<std::uint32_t>(std::min<std::size_t>(cpu.rows, 500));
  double worst = 0;
  for (std::uint32_t a = 0; a < words; ++a)
    for (std::uint32_t b = a + 1; b < words; ++b)
      worst = std::max(worst, std::abs(neighbors::cosine(gpu, a, b) - neighbors::cosine(cpu, a, b)));
  EXPECT_LE(worst, 2e-3);
}

// The word vectors made on the device ((u + v) s^p there, half the bytes back) equal
// those made on the host from the triplets, with and without contexts: to rounding, as
// two runs of the GPU's SVD differ in the last bits (cuSPARSE's products sum in any order).
TEST(GpuEmbed, VectorsMadeOnTheDeviceEqualTheHosts) {
  SIMKIT_REQUIRE_GPU();
  const disco::Model model = test::sample_ppmi_model();
  embed::Options options = embed::default_options();
  options.svd.rank = 24;
  options.svd.device = 0;
  for (const bool contexts : {true, false}) {
    options.add_contexts = contexts;
    embed::Svd svd;
    const embed::Vectors host = embed::vectors(model, options, &svd);  // made from the downloaded u and v
    const embed::Vectors device = embed::vectors(model, options);
    ASSERT_EQ(device.singular_values.size(), host.singular_values.size());
    for (std::size_t i = 0; i < host.singular_values.size(); ++i)
      EXPECT_NEAR(device.singular_values[i], host.singular_values[i], 1e-5 * host.singular_values[0]);
    ASSERT_EQ(device.values.size(), host.values.size());
    float largest = 0, worst = 0;
    for (std::size_t i = 0; i < host.values.size(); ++i) {
      largest = std::max(largest, std::abs(host.values[i]));
      worst = std::max(worst, std::abs(device.values[i] - host.values[i]));
    }
    EXPECT_LE(worst, 1e-4f * largest) << "contexts " << contexts;
  }
}

}  // namespace
}  // namespace simkit
