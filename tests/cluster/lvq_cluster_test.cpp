// simkit lvq under mpirun against one process, on the real digits sample: the workers
// (every rank's CPU, or its GPU) each score a share of every batch and exchange the
// outcomes, so the model, the learning curve and the predictions equal one process's.
// On the CPU the ranks' distances come from the same BLAS on fewer rows: prototypes agree
// within 1e-4 relative (they agree bit for bit where BLAS rounds a row alike at any row
// count, as OpenBLAS does), losses within 1e-6 relative, and the error counts and the
// predictions exactly (no digits sample lies within rounding of a tie). Failures on one
// rank stop every rank with one line and leave no output. GPU forms (--device cuda:all in
// one process, one GPU a rank) run where the machine has two GPUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "simkit/device.hpp"
#include "simkit/lvq.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

std::string digits(const char* part) {
  return (test::source_dir() / "data/samples/digits" / (std::string(part) + ".csv")).string();
}

// `lvq train` on the digits sample writing its model and curve into `dir`; `extra` adds
// options (the device).
std::vector<std::string> train_args(const fs::path& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"lvq",       "train", "--train",    digits("train"), "--test",
                                   digits("test"), "-p",   "3",          "-e",            "6",
                                   "-b",        "16",    "--standardize", "-o",         (dir / "model.skq").string(),
                                   "--curve",   (dir / "curve.csv").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A learning curve's rows: epoch, loss, train error, test error, learning rate (the
// seconds left out).
std::vector<std::vector<double>> curve_of(const fs::path& path) {
  std::vector<std::vector<double>> rows;
  const std::vector<std::string> lines = test::lines_of(test::read_file(path));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<double> row;
    std::size_t at = 0;
    for (int field = 0; field < 5; ++field) {
      const std::size_t comma = lines[i].find(',', at);
      row.push_back(std::stod(lines[i].substr(at, comma - at)));
      at = comma + 1;
    }
    rows.push_back(row);
  }
  return rows;
}

// What one run trained, next to what one process trained: the same classes, prototypes
// within `tolerance` relative, the same number of epochs with losses within
// `loss_tolerance` relative and the same error fractions (within `error_tolerance`).
void expect_same_training(const fs::path& alone, const fs::path& run, double tolerance, double loss_tolerance,
                          double error_tolerance, const std::string& what) {
  const lvq::Model a = lvq::read_model((alone / "model.skq").string());
  const lvq::Model b = lvq::read_model((run / "model.skq").string());
  EXPECT_EQ(b.classes, a.classes) << what;
  EXPECT_EQ(b.mean, a.mean) << what;
  EXPECT_EQ(b.scale, a.scale) << what;
  ASSERT_EQ(b.prototypes.size(), a.prototypes.size()) << what;
  double worst = 0;
  for (std::size_t i = 0; i < a.prototypes.size(); ++i)
    worst = std::max<double>(worst, std::fabs(b.prototypes[i] - a.prototypes[i]) / (1 + std::fabs(a.prototypes[i])));
  EXPECT_LE(worst, tolerance) << what;
  const auto ca = curve_of(alone / "curve.csv"), cb = curve_of(run / "curve.csv");
  ASSERT_EQ(cb.size(), ca.size()) << what;
  for (std::size_t e = 0; e < ca.size(); ++e) {
    EXPECT_EQ(cb[e][0], ca[e][0]);
    EXPECT_NEAR(cb[e][1], ca[e][1], loss_tolerance * ca[e][1]) << what << ", epoch " << e + 1;
    EXPECT_NEAR(cb[e][2], ca[e][2], error_tolerance) << what << ", epoch " << e + 1;
    EXPECT_NEAR(cb[e][3], ca[e][3], error_tolerance) << what << ", epoch " << e + 1;
    EXPECT_EQ(cb[e][4], ca[e][4]) << what << ", epoch " << e + 1;  // the schedule alone
  }
}

TEST(LvqCluster, TrainingEqualsOneProcess) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir alone_dir;
  const test::RunResult alone = test::run_simkit(train_args(alone_dir.path(), {"--device", "cpu"}));
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  for (const int ranks : {2, 3}) {
    const test::TempDir dir;
    const test::RunResult r = test::run_simkit_mpi(ranks, train_args(dir.path(), {"--device", "cpu"}));
    ASSERT_EQ(r.exit_code, 0) << ranks << " ranks: " << r.err;
    EXPECT_EQ(r.out, alone.out);
    expect_same_training(alone_dir.path(), dir.path(), 1e-4, 1e-6, 0, std::to_string(ranks) + " ranks");
    // The predictions of the two models on the test set: the same, line for line.
    const std::vector<std::string> predict = {"predict", "--device", "cpu", "--data", digits("test"), "--top", "2"};
    auto with_model = [&](const fs::path& d) {
      std::vector<std::string> args = {"lvq"};
      args.insert(args.end(), predict.begin(), predict.end());
      args.insert(args.end(), {"--model", (d / "model.skq").string()});
      return args;
    };
    const test::RunResult p_alone = test::run_simkit(with_model(alone_dir.path()));
    const test::RunResult p_run = test::run_simkit(with_model(dir.path()));
    ASSERT_EQ(p_alone.exit_code, 0) << p_alone.err;
    EXPECT_EQ(p_run.out, p_alone.out) << ranks << " ranks";
  }
}

// Plain SGD (a batch of one: every rank but one scores nothing) and a last batch smaller
// than the ranks, with a held-out validation split and the class means to start.
TEST(LvqCluster, SmallBatchesEqualOneProcess) {
  SIMKIT_REQUIRE_MPI();
  for (const std::string batch : {"1", "7"}) {
    const std::vector<std::string> extra = {"--device", "cpu", "-b", batch, "-p", "1", "-e", "2"};
    const auto args = [&](const fs::path& dir) {
      std::vector<std::string> a = {"lvq", "train", "--train", digits("train"), "--validation", "0.25",
                                    "-o", (dir / "model.skq").string(), "--curve", (dir / "curve.csv").string()};
      a.insert(a.end(), extra.begin(), extra.end());
      return a;
    };
    const test::TempDir alone_dir, dir;
    ASSERT_EQ(test::run_simkit(args(alone_dir.path())).exit_code, 0);
    const test::RunResult r = test::run_simkit_mpi(3, args(dir.path()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_same_training(alone_dir.path(), dir.path(), 1e-4, 1e-6, 0, "mb " + batch);
  }
}

TEST(LvqCluster, PredictionEqualsOneProcess) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  const std::string model = (dir / "model.skq").string();
  ASSERT_EQ(test::run_simkit({"lvq", "train", "--device", "cpu", "--train", digits("train"), "-p", "2", "-e", "3", "-o",
                              model})
                .exit_code,
            0);
  for (const std::string format : {"tsv", "json"}) {
    const std::vector<std::string> args = {"lvq",   "predict",     "--device", "cpu",   "--model",
                                           model,   "--data",      digits("test"), "--top", "3",
                                           "--format", format};
    const test::RunResult alone = test::run_simkit(args);
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    for (const int ranks : {2, 3}) {
      const test::RunResult r = test::run_simkit_mpi(ranks, args);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, alone.out) << ranks << " ranks, " << format;
    }
  }
  // The confusion counts and an output file, written once by rank 0.
  const auto with_files = [&](const std::string& tag) {
    return std::vector<std::string>{"lvq", "predict", "--device", "cpu", "--model", model, "--data", digits("test"),
                                    "--confusion", (dir / (tag + ".tsv")).string(), "-o", (dir / (tag + ".out")).string()};
  };
  ASSERT_EQ(test::run_simkit(with_files("alone")).exit_code, 0);
  const test::RunResult r = test::run_simkit_mpi(3, with_files("three"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "three.tsv"), test::read_file(dir / "alone.tsv"));
  EXPECT_EQ(test::read_file(dir / "three.out"), test::read_file(dir / "alone.out"));
}

// Rank 1 cannot read its training data: every rank stops, one line names rank 1 and the
// file, and neither the model nor the curve is left behind.
TEST(LvqCluster, AMissingFileOnOneRankStopsEveryRank) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  std::vector<std::string> good = train_args(dir.path(), {"--device", "cpu"});
  std::vector<std::string> bad = good;
  bad[3] = (dir / "gone.csv").string();
  const test::RunResult r = test::run_simkit_mpmd({good, bad});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("rank 1 of 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gone.csv"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "model.skq"));
  EXPECT_FALSE(fs::exists(dir / "curve.csv"));
}

// Bad data on every rank (a ragged row): one line, as one process gives it; a copy that
// differs on one rank: refused before training.
TEST(LvqCluster, BadOrDifferingDataIsRefusedWithOneLine) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  std::string text = test::read_file(digits("train"));
  const std::string ragged = text.substr(0, text.find('\n', 1000)) + ",7\n" + text.substr(text.find('\n', 1000) + 1);
  test::write_file(dir / "ragged.csv", ragged);
  std::vector<std::string> args = train_args(dir.path(), {"--device", "cpu"});
  args[3] = (dir / "ragged.csv").string();
  const test::RunResult alone = test::run_simkit(args);
  EXPECT_EQ(alone.exit_code, 2);
  const test::RunResult r = test::run_simkit_mpi(2, args);
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("ragged.csv"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(alone.err.substr(alone.err.find("ragged.csv"), 40)), std::string::npos) << r.err << alone.err;
  EXPECT_FALSE(fs::exists(dir / "model.skq"));

  // The same name, another content on rank 1 (one label changed).
  text[0] = text[0] == '1' ? '2' : '1';
  test::write_file(dir / "other.csv", text);
  std::vector<std::string> other = train_args(dir.path(), {"--device", "cpu"});
  other[3] = (dir / "other.csv").string();
  const test::RunResult d = test::run_simkit_mpmd({train_args(dir.path(), {"--device", "cpu"}), other});
  EXPECT_EQ(d.exit_code, 2);
  ASSERT_EQ(test::lines_of(d.err).size(), 1u) << d.err;
  EXPECT_NE(d.err.find("differs between ranks"), std::string::npos) << d.err;
  EXPECT_FALSE(fs::exists(dir / "model.skq"));
}

// ---- GPU forms (the lead runs them on a machine with two GPUs)

std::size_t gpus() { return static_cast<std::size_t>(cuda_device_count()); }

// --device cuda:all in one process and one GPU a rank under mpirun, against one GPU: the
// learning curve and the model within the GPU's rounding (cuBLAS rounds a row's distances
// differently at another row count), the predictions on the test set nearly all equal.
TEST(LvqClusterGpu, SeveralGpusEqualOne) {
  SIMKIT_REQUIRE_GPU();
  if (gpus() < 2) GTEST_SKIP() << "needs two GPUs";
  const std::vector<std::string> gemm = {"--kernel", "gemm"};
  // Mini-batches of 64 here (train_args gives 16): -b given once, as the CLI requires.
  const auto batch_64 = [](std::vector<std::string> args) {
    *(std::find(args.begin(), args.end(), "-b") + 1) = "64";
    return args;
  };
  const test::TempDir one_dir;
  auto one = batch_64(train_args(one_dir.path(), {"--device", "cuda:0"}));
  one.insert(one.end(), gemm.begin(), gemm.end());
  const test::RunResult alone = test::run_simkit(one);
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const test::TempDir all_dir;
  auto all = batch_64(train_args(all_dir.path(), {"--device", "cuda:all"}));
  all.insert(all.end(), gemm.begin(), gemm.end());
  const test::RunResult r = test::run_simkit(all);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_training(one_dir.path(), all_dir.path(), 1e-2, 1e-4, 0.002, "cuda:all");
  if (test::mpi_available()) {
    const test::TempDir mpi_dir;
    auto per_rank = batch_64(train_args(mpi_dir.path(), {"--device", "cuda"}));
    per_rank.insert(per_rank.end(), gemm.begin(), gemm.end());
    const test::RunResult m = test::run_simkit_mpi(2, per_rank);
    ASSERT_EQ(m.exit_code, 0) << m.err;
    expect_same_training(one_dir.path(), mpi_dir.path(), 1e-2, 1e-4, 0.002, "a GPU a rank");
    // Prediction shared by the two ranks' GPUs: the one-process answer.
    const std::vector<std::string> predict = {"lvq",   "predict", "--model", (one_dir / "model.skq").string(),
                                              "--data", digits("test"), "--top", "2"};
    auto on = [&](const std::string& device) {
      auto a = predict;
      a.insert(a.end(), {"--device", device});
      return a;
    };
    const test::RunResult p_alone = test::run_simkit(on("cuda:0"));
    const test::RunResult p_ranks = test::run_simkit_mpi(2, on("cuda"));
    ASSERT_EQ(p_ranks.exit_code, 0) << p_ranks.err;
    // Row for row, but for a near-tie that cuBLAS may round apart at another row count.
    const auto a = test::lines_of(p_alone.out), b = test::lines_of(p_ranks.out);
    ASSERT_EQ(b.size(), a.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i + 1 < a.size(); ++i) differ += a[i] != b[i];
    EXPECT_LE(differ, 1u) << p_ranks.out;
  }
}

// Two ranks on a machine of one GPU would drive it twice, which NCCL cannot: refused at
// once with one line (where a GPU a rank is possible, the ranks get their own).
TEST(LvqClusterGpu, TwoRanksOnOneGpuAreRefused) {
  SIMKIT_REQUIRE_GPU();
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  const test::RunResult r = test::run_simkit_mpi(2, train_args(dir.path(), {"--device", "cuda:0"}));
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("driven twice"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "model.skq"));
}

// One rank on the CPU and one on a GPU would exchange their outcomes differently: refused.
TEST(LvqClusterGpu, RanksOnDifferentDevicesAreRefused) {
  SIMKIT_REQUIRE_GPU();
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  const test::RunResult r =
      test::run_simkit_mpmd({train_args(dir.path(), {"--device", "cpu"}), train_args(dir.path(), {"--device", "cuda:0"})});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("the same --device"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "model.skq"));
}

}  // namespace
}  // namespace simkit
