// simkit under mpirun, on the CPU: every job's output with 2 and 3 ranks (shares that do
// not divide evenly) equals one process's, byte for byte; failures on one rank stop every
// rank with one line naming it and leave no output; ranks given different inputs are
// refused. (The GPU forms, --device cuda:all and one GPU a rank, run on a GPU machine:
// docs/distributed.md.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

std::string sample_vectors() { return (test::source_dir() / "data/samples/vectors.vec").string(); }

TEST(ClusterCli, DevicesListsEveryRank) {
  SIMKIT_REQUIRE_MPI();
  const test::RunResult r = test::run_simkit_mpi(3, {"devices"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.out.find("rank " + std::to_string(rank) + " of 3 on "), std::string::npos) << r.out;
  EXPECT_LT(r.out.find("rank 0 of 3"), r.out.find("rank 1 of 3"));  // in rank order
}

TEST(ClusterCli, NeighborsEqualOneProcess) {
  SIMKIT_REQUIRE_MPI();
  test::expect_same_under_mpi({"neighbors", "--device", "cpu", "--model", sample_vectors(), "-k", "7", "king",
                               "king - man + woman", "paris"});
  // Queries from standard input, which the launcher gives to rank 0 alone, in small
  // batches; an unknown word is refused (exit 2) while the others are answered.
  const std::string queries = "water\nthe\nnosuchwordhere\ncity - town\nrun\n";
  const std::vector<std::string> args = {"neighbors", "--device", "cpu", "--model", sample_vectors(),
                                         "--format", "tsv", "--batch", "2"};
  const test::RunResult alone = test::run_simkit(args, queries);
  EXPECT_EQ(alone.exit_code, 2);
  for (const int ranks : {2, 3}) {
    const test::RunResult r = test::run_simkit_mpi(ranks, args, queries);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, alone.out);
    EXPECT_EQ(r.err, alone.err);  // the refusal once, from rank 0
  }
}

TEST(ClusterCli, AMissingInputStopsEveryRankWithOneLine) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  const test::RunResult r = test::run_simkit_mpi(
      2, {"neighbors", "--model", (dir / "missing.vec").string(), "-o", (dir / "out.txt").string(), "king"});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("rank 0 of 2 on "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.vec"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.txt"));
}

// Rank 1 alone fails (its file is missing): every rank stops, the line names rank 1.
TEST(ClusterCli, OneFailingRankStopsEveryRank) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  const std::string out = (dir / "out.txt").string();
  const test::RunResult r = test::run_simkit_mpmd(
      {{"neighbors", "--device", "cpu", "--model", sample_vectors(), "-o", out, "king"},
       {"neighbors", "--device", "cpu", "--model", (dir / "gone.vec").string(), "-o", out, "king"}});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("rank"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(ClusterCli, RanksGivenDifferentInputsAreRefused) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  // The same words, one vector changed: another model under the same name on another host.
  std::string text = test::read_file(sample_vectors());
  text[text.size() - 3] = text[text.size() - 3] == '1' ? '2' : '1';
  test::write_file(dir / "other.vec", text);
  const std::string out = (dir / "out.txt").string();
  const test::RunResult r = test::run_simkit_mpmd(
      {{"neighbors", "--device", "cpu", "--model", sample_vectors(), "-o", out, "king"},
       {"neighbors", "--device", "cpu", "--model", (dir / "other.vec").string(), "-o", out, "king"}});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("differs between ranks"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace simkit
