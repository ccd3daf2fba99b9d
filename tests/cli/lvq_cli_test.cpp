// simkit lvq train / predict / convert through the program, on the real digits sample.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace simkit {
namespace {

double accuracy_of(const std::string& out) {
  const auto at = out.rfind("accuracy ");
  return at == std::string::npos ? -1 : std::stod(out.substr(at + 9));
}

TEST(LvqCli, TrainPredictConvert) {
  test::TempDir dir;
  const std::string train = (test::source_dir() / "data/samples/digits/train.csv").string();
  const std::string test_csv = (test::source_dir() / "data/samples/digits/test.csv").string();
  const std::string model = (dir / "digits.skq").string(), curve = (dir / "curve.csv").string();
  // The defaults on raw 0-16 values: 2 prototypes a class, 30 epochs.
  const auto trained = test::run_simkit({"lvq", "train", "--train", train, "--test", test_csv, "--prototypes-per-class",
                                         "2", "--epochs", "30", "--device", "cpu", "--curve", curve, "-o", model});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const auto lines = test::lines_of(test::read_file(curve));
  ASSERT_EQ(lines.size(), 31u);
  EXPECT_EQ(lines[0], "epoch,loss,train_error,test_error,learning_rate,seconds");
  EXPECT_EQ(lines[30].rfind("30,", 0), 0u);

  const auto predicted = test::run_simkit({"lvq", "predict", "--model", model, "--data", test_csv});
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  const auto rows = test::lines_of(predicted.out);
  ASSERT_EQ(rows.size(), 541u);
  EXPECT_EQ(rows[0].rfind("1\t", 0), 0u);
  EXPECT_GT(accuracy_of(predicted.out), 0.93);  // nearest centroid: 0.90

  // Top 3 candidates, JSON, unlabelled rows (no accuracy), the confusion counts.
  const auto top = test::run_simkit({"lvq", "predict", "--model", model, "--data", test_csv, "--top", "3", "--format",
                                     "json", "--confusion", (dir / "confusion.tsv").string()});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(test::lines_of(top.out)[0].find("\"classes\":[\""), std::string::npos) << top.out.substr(0, 200);
  EXPECT_NE(top.out.find("{\"accuracy\": "), std::string::npos);
  const auto confusion = test::lines_of(test::read_file(dir / "confusion.tsv"));
  ASSERT_EQ(confusion.size(), 11u);
  std::string unlabelled;
  for (const std::string& row : test::lines_of(test::read_file(test_csv)))
    unlabelled += row.substr(row.find(',') + 1) + "\n";
  test::write_file(dir / "u.csv", unlabelled);
  const auto bare = test::run_simkit({"lvq", "predict", "--model", model, "--data", (dir / "u.csv").string()});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.out.find("accuracy"), std::string::npos);
  // The same classes as with labels.
  std::string without_accuracy = predicted.out.substr(0, predicted.out.rfind("accuracy"));
  EXPECT_EQ(bare.out, without_accuracy);

  // .skl loads the same samples: the same predictions.
  const std::string skl = (dir / "test.skl").string();
  ASSERT_EQ(test::run_simkit({"lvq", "convert", test_csv, "-o", skl}).exit_code, 0);
  EXPECT_EQ(test::run_simkit({"lvq", "predict", "--model", model, "--data", skl}).out, predicted.out);

  if (test::gpu_available()) {
    const auto gpu = test::run_simkit({"lvq", "train", "--train", train, "--test", test_csv, "-p", "2", "--device", "cuda",
                                       "-o", (dir / "gpu.skq").string()});
    ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
    const auto g = test::run_simkit({"lvq", "predict", "--model", (dir / "gpu.skq").string(), "--data", test_csv});
    EXPECT_NEAR(accuracy_of(g.out), accuracy_of(predicted.out), 0.0025);
  }
}

TEST(LvqCli, Refusals) {
  test::TempDir dir;
  const auto out = dir / "m.skq";
  test::write_file(dir / "ragged.csv", "1,0,1\n2,1,1\n1,5\n");
  test::expect_refused({"lvq", "train", "--train", (dir / "ragged.csv").string(), "-o", out.string()},
                       "ragged.csv:3: 2 fields, expected 3", out);
  test::write_file(dir / "ok.csv", "1,0,1\n2,1,1\n1,0,2\n2,2,1\n");
  test::expect_refused({"lvq", "train", "--train", (dir / "ok.csv").string(), "--batch", "0", "-o", out.string()},
                       "--batch must be at least 1", out);
  test::expect_refused({"lvq", "train", "--train", (dir / "ok.csv").string(), "--kernel", "magic", "-o", out.string()},
                       "--kernel 'magic': expected auto, reduction, gemm", out);
  ASSERT_EQ(test::run_simkit({"lvq", "train", "--train", (dir / "ok.csv").string(), "-o", out.string(), "--device", "cpu"})
                .exit_code,
            0);
  test::write_file(dir / "wide.csv", "1,0,1,3\n");
  const auto pred = dir / "p.tsv";
  test::expect_refused({"lvq", "predict", "--model", out.string(), "--data", (dir / "wide.csv").string(), "-o", pred.string()},
                       "4 fields, expected the model's 2 features", pred);
  test::write_file(dir / "other.csv", "7,0,1\n");
  test::expect_refused({"lvq", "predict", "--model", out.string(), "--data", (dir / "other.csv").string(), "-o", pred.string()},
                       "label '7' is not one of the model's 2 classes", pred);
}

}  // namespace
}  // namespace simkit
