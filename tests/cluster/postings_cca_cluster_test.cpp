// simkit postings query and simkit cca --streams under mpirun, on the CPU: with 2 and 3
// ranks the output equals one process's byte for byte (postings: the Brown sample and its
// queries, every algorithm and output form; cca: streams of the digit images and seeded
// linear streams, every mode), and bad input stops every rank with one line and no output.
// The GPU forms (a GPU a rank; --device cuda:all) run where a GPU is.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../cca/cca_fixture.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

// The error line's message without "simkit: error: " and a "rank R of N on HOST: " prefix.
std::string message_of(const std::string& err) {
  std::string line = test::lines_of(err).empty() ? "" : test::lines_of(err).front();
  const std::string head = "simkit: error: ";
  if (line.rfind(head, 0) == 0) line.erase(0, head.size());
  if (line.rfind("rank ", 0) == 0) line.erase(0, line.find(": ") + 2);
  return line;
}

// A bad input under 2 and 3 ranks: exit 2, one error line naming a rank and saying what
// one process says, and no output file.
void expect_refused_under_mpi(std::vector<std::string> args, const fs::path& output, const std::string& input = "") {
  args.push_back("-o");
  args.push_back(output.string());
  const test::RunResult alone = test::run_simkit(args, input);
  ASSERT_EQ(alone.exit_code, 2) << alone.err;
  ASSERT_FALSE(fs::exists(output));
  for (const int ranks : {2, 3}) {
    const test::RunResult r = test::run_simkit_mpi(ranks, args, input);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(" of " + std::to_string(ranks) + " on "), std::string::npos) << r.err;
    EXPECT_EQ(message_of(r.err), message_of(alone.err));
    EXPECT_FALSE(fs::exists(output)) << ranks << " ranks";
  }
}

// ---- postings

// The Brown sample's index, built once by one process.
class PostingsCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    const test::RunResult built =
        test::run_simkit({"postings", "build", (test::source_dir() / "data/samples/postings/brown-sample.txt").string(),
                          "-o", index()});
    ASSERT_EQ(built.exit_code, 0) << built.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string index() { return (*dir_ / "brown.skp").string(); }
  static std::string queries() { return (test::source_dir() / "data/samples/postings/queries.txt").string(); }
  static std::vector<std::string> query(std::vector<std::string> more) {
    std::vector<std::string> args = {"postings", "query", "--index", index(), "--queries", queries()};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  static test::TempDir* dir_;
};
test::TempDir* PostingsCluster::dir_ = nullptr;

TEST_F(PostingsCluster, EveryAlgorithmEqualsOneProcess) {
  SIMKIT_REQUIRE_MPI();
  for (const char* algorithm : {"svs", "adaptive", "hash", "galloping", "simd", "bitmap", "auto"}) {
    SCOPED_TRACE(algorithm);
    const test::RunResult alone = test::expect_same_under_mpi(query({"--algorithm", algorithm, "--device", "cpu"}));
    EXPECT_EQ(test::lines_of(alone.out).size(), 1000u);
  }
}

TEST_F(PostingsCluster, EveryOutputFormEqualsOneProcess) {
  SIMKIT_REQUIRE_MPI();
  test::expect_same_under_mpi(query({"--device", "cpu", "--format", "json"}));
  test::expect_same_under_mpi(query({"--device", "cpu", "--count"}));
  test::expect_same_under_mpi(query({"--device", "cpu", "--count", "--format", "json"}));
  // Queries on standard input, which reaches rank 0 alone.
  const std::string text = test::read_file(queries());
  test::expect_same_under_mpi({"postings", "query", "--index", index(), "--queries", "-", "--device", "cpu"}, text);
  // An output file, written once by rank 0.
  const test::TempDir dir;
  const auto written = [&](int ranks) {
    const fs::path out = dir / ("out" + std::to_string(ranks) + ".tsv");
    std::vector<std::string> args = query({"--device", "cpu", "-o", out.string()});
    const test::RunResult r = ranks == 1 ? test::run_simkit(args) : test::run_simkit_mpi(ranks, args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    return test::read_file(out);
  };
  const std::string alone = written(1);
  EXPECT_EQ(test::lines_of(alone).size(), 1000u);
  EXPECT_EQ(written(2), alone);
  EXPECT_EQ(written(3), alone);
}

// The seed's ExpIndex with term-id queries, from a logged seed: lists of every length,
// ids up to the last document.
TEST_F(PostingsCluster, ExpIndexEqualsOneProcess) {
  SIMKIT_REQUIRE_MPI();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir dir;
  std::string bytes, query_text;
  for (int t = 0; t < 60; ++t) {
    std::vector<std::uint32_t> list;
    const int length = random.integer(0, 9) == 0 ? 0 : random.integer(1, 4000);
    for (std::uint32_t id = static_cast<std::uint32_t>(random.integer(0, 50)); list.size() < std::size_t(length);
         id += static_cast<std::uint32_t>(random.integer(1, 12)))
      list.push_back(id);
    const auto n = static_cast<std::uint32_t>(list.size());
    bytes.append(reinterpret_cast<const char*>(&n), 4);
    bytes.append(reinterpret_cast<const char*>(list.data()), list.size() * 4);
  }
  for (int q = 0; q < 300; ++q) {
    const int terms = random.integer(1, 4);
    for (int i = 0; i < terms; ++i) query_text += fmt::format("{}{}", i == 0 ? "" : " ", random.integer(0, 59));
    query_text += '\n';
  }
  test::write_file(dir / "ExpIndex", bytes);
  test::write_file(dir / "ExpQuery", query_text);
  for (const char* algorithm : {"svs", "auto"})
    test::expect_same_under_mpi({"postings", "query", "--exp-index", (dir / "ExpIndex").string(), "--queries",
                                 (dir / "ExpQuery").string(), "--algorithm", algorithm});
}

// A term id out of range on line 3 of the queries (read by rank 0): every rank stops.
TEST_F(PostingsCluster, ABadQueryStopsEveryRank) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  test::write_file(dir / "q.txt", "1 2\n3\n99999999\n4 5\n");
  expect_refused_under_mpi({"postings", "query", "--index", index(), "--queries", (dir / "q.txt").string(),
                            "--term-ids", "--device", "cpu"},
                           dir / "out.tsv");
  expect_refused_under_mpi({"postings", "query", "--index", (dir / "missing.skp").string(), "--queries", queries()},
                           dir / "out.tsv");
}

TEST_F(PostingsCluster, RanksGivenDifferentIndexesAreRefused) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  test::write_file(dir / "docs.txt", "the cat sat\nthe dog ran\n");
  ASSERT_EQ(test::run_simkit({"postings", "build", (dir / "docs.txt").string(), "-o", (dir / "other.skp").string()})
                .exit_code,
            0);
  const std::string out = (dir / "out.tsv").string();
  const test::RunResult r = test::run_simkit_mpmd(
      {{"postings", "query", "--index", index(), "--queries", queries(), "--device", "cpu", "-o", out},
       {"postings", "query", "--index", (dir / "other.skp").string(), "--queries", queries(), "--device", "cpu", "-o",
        out}});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("differs between ranks"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// A GPU a rank (ranks of one host share its GPUs), and every GPU of one process: the CPU's
// answers.
TEST_F(PostingsCluster, GpuWorkersEqualTheCpu) {
  SIMKIT_REQUIRE_MPI();
  SIMKIT_REQUIRE_GPU();
  for (const char* form : {"", "--count"}) {
    std::vector<std::string> cpu = query({"--device", "cpu"}), gpu = query({"--device", "cuda"}),
                             all = query({"--device", "cuda:all"});
    if (*form != '\0') cpu.push_back(form), gpu.push_back(form), all.push_back(form);
    const test::RunResult want = test::run_simkit(cpu);
    ASSERT_EQ(want.exit_code, 0) << want.err;
    EXPECT_EQ(test::run_simkit(all).out, want.out) << form;
    for (const int ranks : {2, 3}) {
      const test::RunResult r = test::run_simkit_mpi(ranks, gpu);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, want.out) << ranks << " ranks " << form;
    }
  }
}

// ---- cca

// Stream files: the digit images' 8 rows of 8 pixels as 4 streams of 2 rows each, and 6
// seeded linear streams of 4 columns; one stream (the first digit one) also with a
// non-number on line 50.
class CcaCluster : public ::testing::Test {
 protected:
  CcaCluster() {
    std::size_t count = 0;
    const std::vector<double> halves = test::digit_halves(count);  // left 32 | right 32 pixels
    std::vector<std::string> digits(4);
    for (std::size_t t = 0; t < count; ++t)
      for (std::size_t r = 0; r < 8; ++r)
        for (std::size_t c = 0; c < 8; ++c) {
          const double pixel = halves[t * 64 + (c < 4 ? 0 : 32) + r * 4 + c % 4];
          std::string& s = digits[r / 2];
          s += fmt::format("{}{:g}", r % 2 == 0 && c == 0 ? "" : ",", pixel);
          if (r % 2 == 1 && c == 7) s += '\n';
        }
    for (std::size_t i = 0; i < 4; ++i) {
      digit_streams.push_back((dir / fmt::format("digits{}.csv", i)).string());
      test::write_file(digit_streams.back(), digits[i]);
    }
    std::string bad = digits[0];
    std::size_t at = 0;
    for (int line = 1; line < 50; ++line) at = bad.find('\n', at) + 1;
    bad.replace(at, bad.find(',', at) - at, "abc");
    bad_stream = (dir / "bad.csv").string();
    test::write_file(bad_stream, bad);

    test::Random random;
    seed = random.seed();
    const std::vector<double> linear = test::linear_stream(random, 500, 12, 12, 3);
    std::vector<std::string> texts(6);
    for (std::size_t t = 0; t < 500; ++t)
      for (std::size_t c = 0; c < 24; ++c)
        texts[c / 4] += fmt::format("{}{:.17g}{}", c % 4 == 0 ? "" : " ", linear[t * 24 + c], c % 4 == 3 ? "\n" : "");
    for (std::size_t i = 0; i < 6; ++i) {
      linear_streams.push_back((dir / fmt::format("linear{}.txt", i)).string());
      test::write_file(linear_streams.back(), texts[i]);
    }
  }
  static std::vector<std::string> cca(const std::vector<std::string>& streams, std::vector<std::string> more) {
    std::vector<std::string> args = {"cca", "--device", "cpu", "--threads", "1", "--streams"};
    args.insert(args.end(), streams.begin(), streams.end());
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  test::TempDir dir;
  std::vector<std::string> digit_streams, linear_streams;
  std::string bad_stream;
  std::uint64_t seed = 0;
};

TEST_F(CcaCluster, DigitStreamsEqualOneProcess) {
  SIMKIT_REQUIRE_MPI();
  // Every other step, solved in batches (6 pairs: 3 each on 2 ranks, 2 each on 3).
  const test::RunResult every = test::expect_same_under_mpi(
      cca(digit_streams, {"--window", "200", "--k", "2", "--ridge", "0.01", "--every", "2"}));
  EXPECT_EQ(test::lines_of(every.out).size(), 6u * ((1257 - 200) / 2 + 1));
  // JSON with the canonical vectors, every 25th step.
  test::expect_same_under_mpi(
      cca(digit_streams, {"--window", "300", "--k", "2", "--ridge", "0.01", "--every", "25", "--vectors", "--format",
                          "json"}));
  // One stream from standard input (rank 0's alone).
  std::vector<std::string> rest(digit_streams.begin() + 1, digit_streams.end());
  rest.insert(rest.begin(), "-");
  test::expect_same_under_mpi(cca(rest, {"--window", "200", "--k", "1", "--ridge", "0.01", "--every", "7"}),
                              test::read_file(digit_streams[0]));
}

TEST_F(CcaCluster, LinearStreamsEveryModeEqualsOneProcess) {
  SIMKIT_REQUIRE_MPI();
  SCOPED_TRACE(seed);
  const std::vector<std::vector<std::string>> modes = {
      {"--window", "100", "--k", "3"},
      {"--window", "100", "--k", "3", "--solve-batch", "1"},
      {"--window", "100", "--k", "2", "--skip", "0.05"},
      {"--window", "100", "--k", "2", "--mode", "approx", "--approx-error", "--alpha", "0.01", "--epsilon", "0.9",
       "--every", "10", "--format", "json"},
      {"--window", "120", "--k", "2", "--every", "40", "--vectors"}};
  for (const auto& mode : modes) test::expect_same_under_mpi(cca(linear_streams, mode));
  // The skip note, from rank 0 alone.
  const std::vector<std::string> args = cca(linear_streams, modes[2]);
  const test::RunResult alone = test::run_simkit(args);
  const test::RunResult shared = test::run_simkit_mpi(2, args);
  EXPECT_EQ(shared.err, alone.err);
  EXPECT_NE(alone.err.find("skipped"), std::string::npos) << alone.err;
}

// One pair, and --convert, run on rank 0 alone: the same output.
TEST_F(CcaCluster, OnePairAndConvertRunOnRankZero) {
  SIMKIT_REQUIRE_MPI();
  test::expect_same_under_mpi({"cca", "--device", "cpu", "--x-file", digit_streams[0], "--y-file", digit_streams[1],
                               "--window", "150", "--k", "2", "--ridge", "0.01"});
  for (const int ranks : {1, 2}) {
    const fs::path out = dir / fmt::format("streams{}.sks", ranks);
    const std::vector<std::string> args = cca(linear_streams, {"--convert", out.string()});
    const test::RunResult r = ranks == 1 ? test::run_simkit(args) : test::run_simkit_mpi(ranks, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(test::read_file(dir / "streams2.sks"), test::read_file(dir / "streams1.sks"));
}

TEST_F(CcaCluster, BadInputStopsEveryRank) {
  SIMKIT_REQUIRE_MPI();
  // The digits' blank border pixels make every window singular without a ridge: the error
  // one process gives (its step and stream), whichever rank solves that pair.
  expect_refused_under_mpi(cca(digit_streams, {"--window", "200"}), dir / "out.tsv");
  // A non-number on line 50 of one stream, read by rank 0.
  std::vector<std::string> streams = digit_streams;
  streams[2] = bad_stream;
  expect_refused_under_mpi(cca(streams, {"--window", "20", "--ridge", "0.01"}), dir / "out.tsv");
  EXPECT_NE(message_of(test::run_simkit(cca(streams, {"--window", "20", "--ridge", "0.01"})).err).find(":50"),
            std::string::npos);
}

// A GPU a rank, and every GPU of one process: the CPU's rows (printed to 8 decimals; the
// GPU's batched solver agrees within 1e-8).
TEST_F(CcaCluster, GpuWorkersGiveTheCpusRows) {
  SIMKIT_REQUIRE_MPI();
  SIMKIT_REQUIRE_GPU();
  const std::vector<std::string> more = {"--window", "100", "--k", "2", "--every", "5"};
  std::vector<std::string> cpu = cca(linear_streams, more), gpu = cpu, all = cpu;
  gpu[2] = "cuda";
  all[2] = "cuda:all";
  const test::RunResult want = test::run_simkit(cpu);
  ASSERT_EQ(want.exit_code, 0) << want.err;
  const auto close = [&](const std::string& got, const std::string& what) {
    const auto a = test::lines_of(got), b = test::lines_of(want.out);
    ASSERT_EQ(a.size(), b.size()) << what;
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::istringstream x(a[i]), y(b[i]);
      std::string u, v;
      while (std::getline(x, u, '\t') && std::getline(y, v, '\t'))
        EXPECT_NEAR(std::stod(u), std::stod(v), 3e-8) << what;
    }
  };
  close(test::run_simkit(all).out, "cuda:all");
  for (const int ranks : {2, 3}) {
    const test::RunResult r = test::run_simkit_mpi(ranks, gpu);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    close(r.out, std::to_string(ranks) + " ranks");
  }
}

}  // namespace
}  // namespace simkit
