// The simkit program as a user runs it: outputs, exit codes, error lines, conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;
using test::lines_of;
using test::run_simkit;

std::string sample() { return (test::source_dir() / "data/samples/vectors.vec").string(); }

// "-0.123456" or "0.987654": a similarity printed with six decimals.
bool is_similarity(const std::string& s) {
  const std::size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
  if (s.size() != start + 8 || (s[start] != '0' && s[start] != '1') || s[start + 1] != '.') return false;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(start) + 2, s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// Splits on runs of spaces.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

TEST(NeighborsCli, TsvRows) {
  const auto r = run_simkit({"neighbors", "--model", sample(), "--format", "tsv", "--device", "cpu", "king",
                             "king  -  man +   woman"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 20u);
  bool queen = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto f = fields(lines[i]);
    ASSERT_EQ(f.size(), 4u) << lines[i];
    EXPECT_EQ(f[0], i < 10 ? "king" : "king - man + woman");
    EXPECT_EQ(f[1], std::to_string(i % 10 + 1));
    EXPECT_TRUE(is_similarity(f[3])) << f[3];
    EXPECT_NE(f[2], "king");
    if (i >= 10) {
      EXPECT_NE(f[2], "man");
      EXPECT_NE(f[2], "woman");
      queen = queen || f[2] == "queen";
    }
  }
  EXPECT_TRUE(queen) << r.out;
}

TEST(NeighborsCli, StdinContinuesAfterAnUnknownWord) {
  const auto r = run_simkit({"neighbors", "--model", sample(), "--format", "tsv", "-k", "3", "--device", "cpu"},
                            "king\n\nnosuchword\nqueen - king\n");
  EXPECT_EQ(r.exit_code, 2);
  const auto errors = lines_of(r.err);
  ASSERT_EQ(errors.size(), 1u) << r.err;
  EXPECT_NE(errors[0].find("stdin:3"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("unknown word 'nosuchword'"), std::string::npos) << errors[0];
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(fields(lines[0])[0], "king");
  EXPECT_EQ(fields(lines[5])[0], "queen - king");
}

TEST(NeighborsCli, JsonLines) {
  const auto r = run_simkit({"neighbors", "--model", sample(), "--format", "json", "-k", "2", "--device", "cpu"},
                            "water\nfather - man + woman\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u);
  const auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second["query"], "father - man + woman");
  ASSERT_EQ(second["neighbors"].size(), 2u);
  EXPECT_EQ(second["neighbors"][0]["rank"], 1);
  EXPECT_TRUE(second["neighbors"][0]["similarity"].is_number());
}

TEST(NeighborsCli, TextOutputToFile) {
  test::TempDir dir;
  const std::string out = (dir / "answers.txt").string();
  const auto r = run_simkit({"neighbors", "--model", sample(), "--device", "cpu", "-o", out, "water"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const auto lines = lines_of(test::read_file(out));
  ASSERT_GE(lines.size(), 11u);
  EXPECT_EQ(lines[0], "water");
  const auto first = words(lines[1]);
  ASSERT_EQ(first.size(), 3u) << lines[1];
  EXPECT_EQ(first[0], "1");
  EXPECT_TRUE(is_similarity(first[2])) << lines[1];
}

TEST(NeighborsCli, ConvertedModelsAnswerTheSame) {
  test::TempDir dir;
  const std::string skv = (dir / "m.skv").string();
  auto r = run_simkit({"neighbors", "convert", sample(), "-o", skv});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bin = (dir / "m.bin").string();
  r = run_simkit({"neighbors", "convert", skv, "-o", bin, "--timings"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("timing: converted 4000 words x 100 dimensions"), std::string::npos) << r.err;
  r = run_simkit({"neighbors", "convert", bin, "-o", (dir / "back.vec").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "back.vec"), test::read_file(sample())) << "text -> skv -> bin -> text";

  const std::vector<std::string> query = {"--format", "tsv", "--device", "cpu", "king - man + woman", "light"};
  std::vector<std::string> args = {"neighbors", "--model", sample()};
  args.insert(args.end(), query.begin(), query.end());
  const auto from_text = run_simkit(args);
  args[2] = skv;
  const auto from_skv = run_simkit(args);
  ASSERT_EQ(from_text.exit_code, 0);
  EXPECT_EQ(from_text.out, from_skv.out);
}

TEST(NeighborsCli, ConvertNeedsAKnownOutputFormat) {
  test::TempDir dir;
  const auto r = run_simkit({"neighbors", "convert", sample(), "-o", (dir / "m.xyz").string()});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(lines_of(r.err).size(), 1u);
  EXPECT_NE(r.err.find("--to"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "m.xyz"));
}

TEST(NeighborsCli, UsageErrorsAreOneLine) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"neighbors", "king"}, {"neighbors", "--model", sample(), "--k", "0", "x"},
        {"neighbors", "--model", sample(), "--bogus"}, {"neighbors", "--model", sample(), "--device", "tpu", "king"},
        {"neighbors", "--model", sample(), "--format", "xml", "king"},
        {"neighbors", "--model", sample(), "--gpu-split", "shards", "king"}, {"frobnicate"}, {}}) {
    const auto r = run_simkit(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("simkit: error: ", 0), 0u) << r.err;
  }
}

TEST(NeighborsCli, MissingModelIsBadInput) {
  const auto r = run_simkit({"neighbors", "--model", "/no/such/model.vec", "king"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "simkit: error: /no/such/model.vec: cannot open: No such file or directory\n");
}

TEST(NeighborsCli, HelpAndDevices) {
  auto r = run_simkit({"neighbors", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--model"), std::string::npos);
  EXPECT_NE(r.out.find("king - man + woman"), std::string::npos);
  r = run_simkit({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("neighbors"), std::string::npos);
  r = run_simkit({"devices"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("cpu\t", 0), 0u) << r.out;
}

// cuBLAS, cuSOLVER and cuSPARSE are loaded when first called (core/cuda/math_libraries.cpp),
// not at every command's start (they took 70 ms of it): the loader's log (LD_DEBUG=libs)
// names none of them for commands that do not use them, and cuBLAS for one that does.
TEST(Cli, GpuMathLibrariesLoadedOnFirstUse) {
  const test::ScopedEnv debug("LD_DEBUG", "libs");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, {"neighbors", "--model", sample(), "--device", "cpu", "king"}}) {
    const auto r = run_simkit(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const char* library : {"libcublas", "libcusolver", "libcusparse"})
      EXPECT_EQ(r.err.find(library), std::string::npos) << library << " loaded by simkit " << args[0];
  }
  if (!test::gpu_available()) return;
  const auto r = run_simkit({"neighbors", "--model", sample(), "--device", "cuda", "king"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("libcublas"), std::string::npos) << "cuBLAS not loaded by a GPU search";
}

TEST(NeighborsCli, CompareCpuOnGpu) {
  SIMKIT_REQUIRE_GPU();
  const auto r = run_simkit({"neighbors", "--model", sample(), "--device", "cuda", "--compare-cpu", "--timings",
                             "--format", "tsv", "king", "king - man + woman"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the lists agree"), std::string::npos) << r.err;
  const auto cpu = run_simkit({"neighbors", "--model", sample(), "--device", "cpu", "--format", "tsv", "king",
                               "king - man + woman"});
  EXPECT_EQ(lines_of(r.out).size(), lines_of(cpu.out).size());
}

}  // namespace
}  // namespace simkit
