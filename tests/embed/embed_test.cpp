// simkit embed on the CPU: the randomized SVD against a dense float64 SVD (Eigen's) on
// small matrices, the vectors' assembly from it, and word vectors written in every format
// `simkit neighbors` reads and read back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Dense>

#include "embed_fixture.hpp"
#include "simkit/disco.hpp"
#include "simkit/embed.hpp"
#include "simkit/error.hpp"
#include "simkit/neighbors.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

using test::SparseMatrix;

// The float64 reference: every singular triplet of the dense matrix.
struct DenseSvd {
  Eigen::MatrixXd u, v;
  Eigen::VectorXd s;
  explicit DenseSvd(const SparseMatrix& m) {
    const Eigen::BDCSVD<Eigen::MatrixXd> svd(m.dense(), Eigen::ComputeThinU | Eigen::ComputeThinV);
    u = svd.matrixU();
    v = svd.matrixV();
    s = svd.singularValues();
  }
};

// Singular values within `tolerance` relative of the reference's, and each (u_i, v_i)
// the reference's up to one common sign (checked as |u_i . u_ref_i| and the sign agreeing
// for v).
// `rank` first triplets checked (of got.rank).
void expect_same_svd(const embed::Svd& got, const DenseSvd& want, std::size_t rank, double tolerance) {
  ASSERT_GE(got.rank, rank);
  const std::size_t k = got.rank;
  for (std::size_t i = 0; i < rank; ++i) {
    EXPECT_NEAR(got.s[i], want.s(i), tolerance * want.s(0)) << "singular value " << i;
    double du = 0, dv = 0;
    for (std::size_t r = 0; r < got.rows; ++r) du += got.u[r * k + i] * want.u(r, i);
    for (std::size_t c = 0; c < got.cols; ++c) dv += got.v[c * k + i] * want.v(c, i);
    EXPECT_NEAR(std::abs(du), 1.0, 10 * tolerance) << "left vector " << i;
    EXPECT_NEAR(du * dv, 1.0, 10 * tolerance) << "the signs of u and v " << i;
  }
}

TEST(EmbedSvd, SketchAsWideAsTheMatrixIsExact) {
  // l = rank + oversampling = the smaller side: the range finder spans the whole column
  // space, so every kept triplet is exact up to rounding, with or without power steps.
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (const auto& [rows, cols, density] : {std::tuple<std::size_t, std::size_t, double>{70, 40, 0.3},
                                            std::tuple<std::size_t, std::size_t, double>{35, 60, 0.5}}) {
    const SparseMatrix m = SparseMatrix::random(rows, cols, density, random);
    const DenseSvd want(m);
    for (const int q : {0, 1, 3}) {
      embed::SvdOptions options;
      options.oversampling = 6;
      options.rank = std::min(rows, cols) - options.oversampling;
      options.power_iterations = q;
      SCOPED_TRACE(testing::Message() << rows << " x " << cols << ", q " << q);
      expect_same_svd(embed::truncated_svd(m.view(), options), want, options.rank, 2e-5);
    }
  }
}

TEST(EmbedSvd, FastDecayingSpectrumGivesTheTopTriplets) {
  // A = sum_i 0.6^i x_i y_i^T over 40 random sparse rank-one terms: the sketch's 30 + 10
  // columns and two power steps leave the top 30 exact to float rounding.
  test::Random random;
  SCOPED_TRACE(random.seed());
  const SparseMatrix m = SparseMatrix::decaying(300, 200, 40, 0.6, random);
  const DenseSvd want(m);
  embed::SvdOptions options;
  options.rank = 12;
  options.oversampling = 10;
  options.power_iterations = 2;
  expect_same_svd(embed::truncated_svd(m.view(), options), want, options.rank, 1e-4);
  // The same seed repeats the same bits; another seed gives the same triplets.
  const embed::Svd a = embed::truncated_svd(m.view(), options), b = embed::truncated_svd(m.view(), options);
  EXPECT_EQ(a.u, b.u);
  EXPECT_EQ(a.s, b.s);
  options.seed = 99;
  expect_same_svd(embed::truncated_svd(m.view(), options), want, options.rank, 1e-4);
}

TEST(EmbedSvd, RankDeficientMatricesKeepTheirRange) {
  // Rank 6 with a sketch of 16 columns: the sketch's columns are dependent, so Cholesky QR
  // gives way to Householder QR; the 6 triplets are exact and the rest have s = 0.
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::SparseMatrix m = test::SparseMatrix::decaying(80, 60, 6, 0.8, random);
  const DenseSvd want(m);
  embed::SvdOptions options;
  options.rank = 10;
  options.oversampling = 6;
  const embed::Svd got = embed::truncated_svd(m.view(), options);
  expect_same_svd(got, want, 6, 1e-4);
  for (std::size_t i = 6; i < 10; ++i) EXPECT_NEAR(got.s[i], 0.0, 1e-4 * want.s(0)) << i;
}

TEST(EmbedSvd, RefusesARankPastTheMatrix) {
  test::Random random;
  const SparseMatrix m = SparseMatrix::random(30, 20, 0.5, random);
  embed::SvdOptions options;
  options.rank = 15;
  options.oversampling = 10;
  try {
    embed::truncated_svd(m.view(), options);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a matrix of at least 25 x 25; this one is 30 x 20"),
              std::string::npos)
        << e.what();
  }
  options.rank = 0;
  EXPECT_THROW(embed::truncated_svd(m.view(), options), UsageError);
}

TEST(EmbedVectors, AreUsPlusVsOfThePpmiSvd) {
  const disco::Model model = test::sample_ppmi_model();
  embed::Options options = embed::default_options();
  options.svd.rank = 16;
  for (const double eig : {0.0, 0.5})
    for (const bool contexts : {false, true}) {
      options.eig = eig;
      options.add_contexts = contexts;
      embed::Svd svd;
      const embed::Vectors vectors = embed::vectors(model, options, &svd);
      ASSERT_EQ(vectors.words, model.words);
      ASSERT_EQ(vectors.dim, 16u);
      for (std::size_t w = 0; w < model.size(); w += 13)
        for (std::size_t i = 0; i < 16; ++i) {
          const double want = (svd.u[w * 16 + i] + (contexts ? svd.v[w * 16 + i] : 0.0)) * std::pow(svd.s[i], eig);
          EXPECT_NEAR(vectors.values[w * 16 + i], want, 1e-6 * std::max(1.0, std::abs(want)));
        }
    }
  disco::Model lin = model;
  lin.measure = disco::Measure::lin;
  EXPECT_THROW(embed::vectors(lin, options), UsageError);
}

TEST(EmbedVectors, EveryFormatReadsBackAsWritten) {
  const disco::Model model = test::sample_ppmi_model();
  embed::Options options = embed::default_options();
  options.svd.rank = 24;
  const embed::Vectors vectors = embed::vectors(model, options);
  const neighbors::Model written = embed::as_model(vectors);
  test::TempDir dir;
  for (const char* name : {"v.skv", "v.txt", "v.vec", "v.bin", "v.npy"}) {
    SCOPED_TRACE(name);
    const std::string path = (dir / name).string();
    const neighbors::Format format = neighbors::format_of_extension(path);
    const std::string words = format == neighbors::Format::Npy ? (dir / "v.words").string() : "";
    neighbors::save_model(written, path, format, nullptr, words);
    neighbors::LoadOptions load;
    load.words_path = words;
    const neighbors::Model back = neighbors::load_model(path, load);
    EXPECT_EQ(back.format, format);
    ASSERT_EQ(back.rows, vectors.words.size());
    ASSERT_EQ(back.dim, vectors.dim);
    for (std::size_t r = 0; r < back.rows; ++r) ASSERT_EQ(back.word(r), vectors.words[r]);
    EXPECT_TRUE(std::equal(back.vectors, back.vectors + back.rows * back.dim, vectors.values.begin()));
  }
}

}  // namespace
}  // namespace simkit
