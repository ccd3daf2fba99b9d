// simkit embed, disco build --measure ppmi and neighbors evaluate through the program.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace simkit {
namespace {

// Two `similar --all` outputs name the same neighbours in the same order, their scores
// within float rounding (the dense form sums in float32, the sparse one in float64).
void expect_same_lists(const std::string& a, const std::string& b) {
  const auto la = test::lines_of(a), lb = test::lines_of(b);
  ASSERT_EQ(la.size(), lb.size());
  for (std::size_t i = 0; i < la.size(); ++i) {
    const std::size_t ta = la[i].rfind('\t'), tb = lb[i].rfind('\t');
    EXPECT_EQ(la[i].substr(0, ta), lb[i].substr(0, tb));
    EXPECT_NEAR(std::stod(la[i].substr(ta + 1)), std::stod(lb[i].substr(tb + 1)), 2e-6) << la[i];
  }
}

std::string sample_corpus() { return (test::source_dir() / "data/samples/postings/brown-sample.txt").string(); }

TEST(EmbedCli, VectorsForNeighborsInEveryFormat) {
  test::TempDir dir;
  const std::string skv = (dir / "v.skv").string();
  const auto made = test::run_simkit({"embed", sample_corpus(), "-o", skv, "--dim", "20", "--max-words", "2000",
                                      "--device", "cpu", "--quiet", "--timings"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.err.find("timing: SVD (rank 20"), std::string::npos) << made.err;
  const auto near = test::run_simkit({"neighbors", "--model", skv, "--format", "tsv", "--k", "3", "king"});
  ASSERT_EQ(near.exit_code, 0) << near.err;
  EXPECT_EQ(test::lines_of(near.out).size(), 3u) << near.out;
  // The same vectors in the other formats answer the same (word2vec text is the check).
  const std::string vec = (dir / "v.vec").string(), npy = (dir / "v.npy").string();
  ASSERT_EQ(test::run_simkit({"embed", sample_corpus(), "-o", vec, "--dim", "20", "--max-words", "2000", "--device",
                              "cpu", "-q"})
                .exit_code,
            0);
  ASSERT_EQ(test::run_simkit({"embed", sample_corpus(), "-o", npy, "--dim", "20", "--max-words", "2000", "--device",
                              "cpu", "-q"})
                .exit_code,
            0);
  EXPECT_TRUE(std::filesystem::exists(dir / "v.words"));
  const auto from_vec = test::run_simkit({"neighbors", "--model", vec, "--format", "tsv", "--k", "3", "king"});
  const auto from_npy =
      test::run_simkit({"neighbors", "--model", npy, "--words", (dir / "v.words").string(), "--format", "tsv", "--k",
                        "3", "king"});
  EXPECT_EQ(from_vec.out, near.out) << from_vec.err;
  EXPECT_EQ(from_npy.out, near.out) << from_npy.err;
  // Gold standards: unknown words are coverage, not errors; both evaluations agree in form.
  test::write_file(dir / "gold.txt", "king\tqueen\t8\nking\tstreet\t2\nman\twoman\t7\nzyzzyva\tking\t5\n");
  const auto eval = test::run_simkit({"neighbors", "evaluate", "--model", skv, (dir / "gold.txt").string()});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_EQ(eval.out.rfind((dir / "gold.txt").string() + "\tspearman\t", 0), 0u) << eval.out;
  EXPECT_NE(eval.out.find("\tcovered\t3\tof\t4\n"), std::string::npos) << eval.out;
  const auto from_npy_eval = test::run_simkit(
      {"neighbors", "evaluate", "--model", npy, "--words", (dir / "v.words").string(), (dir / "gold.txt").string()});
  EXPECT_EQ(from_npy_eval.out, eval.out) << from_npy_eval.err;
}

TEST(EmbedCli, Refusals) {
  test::TempDir dir;
  test::write_file(dir / "tiny.txt", "the red apple is sweet\nthe red cherry is sweet\na green apple is sour\n");
  const std::string out = (dir / "v.skv").string();
  test::expect_refused({"embed", (dir / "tiny.txt").string(), "-o", out}, "too few for --dim 300", out);
  test::expect_refused({"embed", (dir / "tiny.txt").string(), "-o", (dir / "v.json").string()},
                       "cannot tell the output format", dir / "v.json");
  test::expect_refused({"embed", (dir / "tiny.txt").string(), "-o", out, "--dim", "2", "--eig", "2"},
                       "--eig must be in [0, 1]", out);
  test::expect_refused({"embed", (dir / "tiny.txt").string(), "-o", out, "--dim", "2", "--alpha", "0"},
                       "--alpha must be in (0, 1]", out);
  test::write_file(dir / "gold.txt", "apple\tcherry\tmany\n");
  test::expect_refused({"neighbors", "evaluate", "--model", (test::source_dir() / "data/samples/vectors.vec").string(),
                        (dir / "gold.txt").string(), "-o", (dir / "e.tsv").string()},
                       "gold.txt:1:14: expected a score", dir / "e.tsv");
}

TEST(EmbedCli, DiscoPpmiScoresByCosine) {
  test::TempDir dir;
  test::write_file(dir / "corpus.txt",
                   "the red apple is sweet\nthe red cherry is sweet\nthe green apple is sour\n"
                   "a red wine is sweet\nthe green tea is bitter\na sour lemon is green\n");
  const std::string model = (dir / "m.skd").string();
  const auto built = test::run_simkit(
      {"disco", "build", (dir / "corpus.txt").string(), "-o", model, "--measure", "ppmi", "--shift", "1", "--min-count",
       "1"});  // (on six lines every PMI falls below the default shift's ln 2)
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const auto same = test::run_simkit({"disco", "compare", "--model", model, "apple", "apple"});
  EXPECT_EQ(same.out, "apple\tapple\t1.000000\n") << same.err;
  const auto all = test::run_simkit({"disco", "similar", "--model", model, "--all", "--k", "2", "--device", "cpu"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const auto sparse =
      test::run_simkit({"disco", "similar", "--model", model, "--all", "--k", "2", "--form", "sparse", "--device", "cpu"});
  expect_same_lists(sparse.out, all.out);
  if (test::gpu_available()) {
    for (const char* form : {"dense", "sparse"}) {
      const auto gpu = test::run_simkit(
          {"disco", "similar", "--model", model, "--all", "--k", "2", "--device", "cuda", "--form", form});
      ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
      expect_same_lists(gpu.out, all.out);
    }
  }
  // --measure ppmi's own defaults where the command line is silent (docs/disco.md).
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the red apple is sweet and the green apple is sour today\n";
  test::write_file(dir / "longer.txt", text);
  const std::string silent = (dir / "silent.skd").string(), spelled = (dir / "spelled.skd").string(),
                    other = (dir / "other.skd").string();
  ASSERT_EQ(test::run_simkit({"disco", "build", (dir / "longer.txt").string(), "-o", silent, "--measure", "ppmi"})
                .exit_code,
            0);
  ASSERT_EQ(test::run_simkit({"disco", "build", (dir / "longer.txt").string(), "-o", spelled, "--measure", "ppmi",
                              "--window", "6", "--distance-weights", "--shift", "2", "--min-count", "2"})
                .exit_code,
            0);
  ASSERT_EQ(test::run_simkit({"disco", "build", (dir / "longer.txt").string(), "-o", other, "--measure", "ppmi",
                              "--no-distance-weights"})
                .exit_code,
            0);
  EXPECT_EQ(test::read_file(silent), test::read_file(spelled));
  EXPECT_NE(test::read_file(silent), test::read_file(other));
  test::expect_refused({"disco", "build", (dir / "corpus.txt").string(), "-o", (dir / "x.skd").string(), "--measure",
                        "pmi"},
                       "--measure 'pmi': expected lin or ppmi", dir / "x.skd");
}

}  // namespace
}  // namespace simkit
