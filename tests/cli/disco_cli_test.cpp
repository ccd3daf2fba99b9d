// simkit disco build / compare / similar / evaluate through the program.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace simkit {
namespace {

TEST(DiscoCli, BuildCompareSimilarEvaluate) {
  test::TempDir dir;
  test::write_file(dir / "corpus.txt",
                   "the red apple is sweet\nthe red cherry is sweet\nthe green apple is sour\n"
                   "a red wine is sweet\nthe green tea is bitter\na sour lemon is green\n");
  const std::string model = (dir / "m.skd").string();
  const auto built = test::run_simkit({"disco", "build", (dir / "corpus.txt").string(), "-o", model, "--window", "3"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const auto same = test::run_simkit({"disco", "compare", "--model", model, "Apple", "apple"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out, "Apple\tapple\t1.000000\n");  // a word is wholly like itself
  const auto pair = test::run_simkit({"disco", "compare", "--model", model, "apple", "cherry"});
  ASSERT_EQ(pair.exit_code, 0) << pair.err;
  EXPECT_EQ(pair.out.rfind("apple\tcherry\t0.", 0), 0u) << pair.out;
  const auto near = test::run_simkit({"disco", "similar", "--model", model, "apple", "--k", "2"});
  ASSERT_EQ(near.exit_code, 0) << near.err;
  const auto lines = test::lines_of(near.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("apple\t1\t", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("apple\t2\t", 0), 0u) << lines[1];
  const auto all = test::run_simkit({"disco", "similar", "--model", model, "--all", "--k", "2", "--device", "cpu"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find(lines[0] + "\n"), std::string::npos) << all.out;  // the same list as for the word alone
  const auto sparse =
      test::run_simkit({"disco", "similar", "--model", model, "--all", "--k", "2", "--form", "sparse", "--device", "cpu"});
  EXPECT_EQ(sparse.out, all.out);
  const auto full = test::run_simkit({"disco", "similar", "--model", model, "--all", "--full", "--device", "cpu"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const auto matrix = test::lines_of(full.out);
  ASSERT_GE(matrix.size(), 3u);
  EXPECT_EQ(matrix[0][0], '\t');  // the header row of words
  if (test::gpu_available()) {
    const auto gpu = test::run_simkit({"disco", "similar", "--model", model, "--all", "--k", "2", "--device", "cuda"});
    EXPECT_EQ(gpu.out, all.out) << gpu.err;
    const auto gpu_sparse = test::run_simkit(
        {"disco", "similar", "--model", model, "--all", "--k", "2", "--form", "sparse", "--device", "cuda"});
    EXPECT_EQ(gpu_sparse.out, all.out) << gpu_sparse.err;
  }
  test::expect_refused({"disco", "similar", "--model", model, "--all", "--kernel", "magma", "-o",
                        (dir / "kernel.tsv").string()},
                       "expected auto, cublas or simkit", dir / "kernel.tsv");
  test::expect_refused({"disco", "similar", "--model", model, "--all", "--precision", "fp8", "-o",
                        (dir / "precision.tsv").string()},
                       "--precision 'fp8': expected fp32, tf32 or fp16", dir / "precision.tsv");
  if (test::gpu_available()) {
    // fp16 rows on cuBLAS: the tiny corpus's lists as fp32 gives them (scores to 6 digits
    // may differ in the last places, the neighbours not).
    const auto fp16 = test::run_simkit(
        {"disco", "similar", "--model", model, "--all", "--k", "2", "--device", "cuda", "--precision", "fp16",
         "--kernel", "cublas"});
    ASSERT_EQ(fp16.exit_code, 0) << fp16.err;
    const auto want = test::lines_of(all.out), got = test::lines_of(fp16.out);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)  // word<TAB>rank<TAB>neighbour<TAB>score
      EXPECT_EQ(got[i].substr(0, got[i].rfind('\t')), want[i].substr(0, want[i].rfind('\t'))) << got[i];
  }
  // A model that keeps its dense form over 5 columns answers as the dense form made then.
  const std::string with_dense = (dir / "dense.skd").string();
  ASSERT_EQ(test::run_simkit({"disco", "build", (dir / "corpus.txt").string(), "-o", with_dense, "--window", "3",
                              "--features", "5"})
                .exit_code,
            0);
  const auto reduced = test::run_simkit({"disco", "similar", "--model", model, "--all", "--k", "2", "--features", "5",
                                         "--device", "cpu"});
  const auto kept = test::run_simkit({"disco", "similar", "--model", with_dense, "--all", "--k", "2", "--device", "cpu"});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(kept.out, reduced.out);
  test::write_file(dir / "gold.txt", "apple\tcherry\t8\r\napple\ttea\t2\nred\tgreen\t7\nzebra\tapple\t1\n");
  const auto eval = test::run_simkit({"disco", "evaluate", "--model", model, (dir / "gold.txt").string()});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_NE(eval.out.find("covered\t3\tof\t4"), std::string::npos) << eval.out;
}

TEST(DiscoCli, BuildReadsCompressedDumpsInASmallBudget) {
  // A bzip2-compressed Wikipedia dump built under a tiny --memory-budget (counts spilled
  // to temporary files) gives the model of its articles' text, byte for byte.
  test::TempDir dir;
  std::string pages, text;
  const char* const sentences[] = {"the red apple is sweet", "the red cherry is sweet", "the green apple is sour",
                                   "a red wine is sweet", "the green tea is bitter", "a sour lemon is green"};
  for (int i = 0; i < 6; ++i) {
    pages += "<page><title>P" + std::to_string(i) + "</title><ns>0</ns><id>" + std::to_string(i) +
             "</id><revision><id>9</id><text xml:space=\"preserve\">'''" + sentences[i] + "'''{{cite|x}}\n"
             "[[Category:Fruit]]</text></revision></page>\n";
    text += std::string(sentences[i]) + "\n";
  }
  test::write_file(dir / "dump.xml.bz2", test::bzip2("<mediawiki>\n" + pages + "</mediawiki>\n"));
  test::write_file(dir / "text.txt", text);
  const std::string from_dump = (dir / "dump.skd").string(), from_text = (dir / "text.skd").string();
  const auto built = test::run_simkit({"disco", "build", (dir / "dump.xml.bz2").string(), "-o", from_dump,
                                       "--memory-budget", "1K", "--quiet"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  ASSERT_EQ(test::run_simkit({"disco", "build", (dir / "text.txt").string(), "-o", from_text}).exit_code, 0);
  EXPECT_TRUE(test::read_file(from_dump) == test::read_file(from_text));
  // Read as text on request, the markup becomes words too.
  ASSERT_EQ(test::run_simkit({"disco", "build", (dir / "dump.xml.bz2").string(), "-o", from_dump, "--input-format",
                              "text"})
                .exit_code,
            0);
  EXPECT_FALSE(test::read_file(from_dump) == test::read_file(from_text));
  test::expect_refused({"disco", "build", (dir / "text.txt").string(), "-o", from_dump, "--input-format", "html"},
                       "--input-format html: expected auto, text or wikipedia", from_dump + ".none");
}

TEST(DiscoCli, Refusals) {
  test::TempDir dir;
  test::write_file(dir / "corpus.txt", "one two three\nthree two one\n");
  const std::string model = (dir / "m.skd").string(), out = (dir / "out.tsv").string();
  ASSERT_EQ(test::run_simkit({"disco", "build", (dir / "corpus.txt").string(), "-o", model}).exit_code, 0);
  test::expect_refused({"disco", "similar", "--model", model, "zebra", "-o", out}, "'zebra' is not in the model", out);
  test::expect_refused({"disco", "compare", "--model", model, "one", "-o", out}, "two words", out);
  test::write_file(dir / "empty.txt", "");
  test::expect_refused({"disco", "build", (dir / "empty.txt").string(), "-o", out}, "no word that could be paired", out);
  test::write_file(dir / "bad.txt", "good\n\xc3\x28\n");
  test::expect_refused({"disco", "build", (dir / "bad.txt").string(), "-o", out}, "bad.txt:2:1: not valid UTF-8", out);
  test::write_file(dir / "trunc.skd", test::read_file(model).substr(0, 100));
  test::expect_refused({"disco", "similar", "--model", (dir / "trunc.skd").string(), "one", "-o", out}, "truncated", out);
  test::write_file(dir / "gold.txt", "one\ttwo\tmany\n");
  test::expect_refused({"disco", "evaluate", "--model", model, (dir / "gold.txt").string(), "-o", out},
                       "gold.txt:1:9: expected a score", out);
}

}  // namespace
}  // namespace simkit
