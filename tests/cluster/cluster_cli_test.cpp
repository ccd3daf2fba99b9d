// simkit under mpirun, on the CPU: every job's output with 2 and 3 ranks (shares that do
// not divide evenly) equals one process's, byte for byte; failures on one rank stop every
// rank with one line naming it and leave no output; ranks given different inputs are
// refused. (The GPU forms, --device cuda:all and one GPU a rank, run on a GPU machine:
// docs/distributed.md.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "simkit/device.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

std::string sample_vectors() { return (test::source_dir() / "data/samples/vectors.vec").string(); }

// The probe program (collectives_probe.cpp).
std::string cluster_probe() { return test::program_path("SIMKIT_CLUSTER_PROBE", SIMKIT_CLUSTER_PROBE); }

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
    EXPECT_TRUE(test::same_text(r.out, alone.out));
    EXPECT_EQ(r.err, alone.err);  // the refusal once, from rank 0
  }
}

TEST(ClusterCli, DiscoAllPairsEqualOneProcess) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  const std::string model = (dir / "brown.skd").string();
  const test::RunResult built = test::run_simkit(
      {"disco", "build", (test::source_dir() / "data/samples/postings/brown-sample.txt").string(), "--words", "3000", "-o",
       model});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  for (const std::string form : {"dense", "sparse"})
    test::expect_same_under_mpi({"disco", "similar", "--device", "cpu", "--model", model, "--all", "--k", "5", "--form", form,
                           "--features", "300"});
}

// disco build and embed count a piece of the corpus in N on each rank (here five files, so
// five pieces, shared unevenly by 2 and 3 ranks); root's model is byte for byte one
// process's, whatever the measure, subsampling or counting budget (a small one spills).
TEST(ClusterCli, DiscoBuildAndEmbedEqualOneProcess) {
  SIMKIT_REQUIRE_MPI();
  const test::TempDir dir;
  const std::vector<std::string> lines =
      test::lines_of(test::read_file(test::source_dir() / "data/samples/postings/brown-sample.txt"));
  std::vector<std::string> corpus;
  for (std::size_t part = 0; part < 5; ++part) {
    std::string text;
    for (std::size_t i = lines.size() * part / 5; i < lines.size() * (part + 1) / 5; ++i) text += lines[i] + "\n";
    corpus.push_back((dir / ("part" + std::to_string(part) + ".txt")).string());
    test::write_file(corpus.back(), text);
  }
  const auto with_corpus = [&](std::vector<std::string> args, const std::string& output) {
    args.insert(args.begin() + (args[0] == "disco" ? 2 : 1), corpus.begin(), corpus.end());
    args.insert(args.end(), {"-o", output});
    return args;
  };
  const std::vector<std::vector<std::string>> jobs = {
      {"disco", "build", "--words", "2000"},
      {"disco", "build", "--measure", "ppmi", "--subsample", "1e-3", "--memory-budget", "1M"},
      {"embed", "--dim", "16", "--to", "glove"}};
  // embed: the same words in the same order (its counts are disco build's); the SVD's
  // floats follow OpenBLAS's threads, which differ between hosts and loads.
  const auto words_of = [](const std::string& text) {
    std::string words;
    for (const std::string& line : test::lines_of(text)) words += line.substr(0, line.find(' ')) + "\n";
    return words;
  };
  for (const std::vector<std::string>& job : jobs) {
    const bool embed = job[0] == "embed";
    const test::RunResult alone = test::run_simkit(with_corpus(job, (dir / "alone").string()));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    const std::string want = test::read_file(dir / "alone");
    ASSERT_GT(want.size(), 1000u);
    for (const int ranks : {2, 3}) {
      const test::RunResult r = test::run_simkit_mpi(ranks, with_corpus(job, (dir / "ranks").string()));
      ASSERT_EQ(r.exit_code, 0) << job[0] << " " << job[1] << ", " << ranks << " ranks: " << r.err;
      const std::string got = test::read_file(dir / "ranks");
      EXPECT_TRUE(embed ? words_of(got) == words_of(want) : got == want) << job[0] << " " << job[1] << ", " << ranks
                                                                         << " ranks";
    }
  }
}

TEST(ClusterCli, DedupEqualOneProcess) {
  SIMKIT_REQUIRE_MPI();
  const std::string boost = (test::source_dir() / "data/samples/boost").string();
  test::expect_same_under_mpi({"hash", "-r", boost});
  test::expect_same_under_mpi({"dedup", "--device", "cpu", boost});
  test::expect_same_under_mpi({"dedup", "--device", "cpu", "--clusters", "--format", "json", boost});
  test::expect_same_under_mpi({"dedup", "--device", "cpu", "--mode", "edit-rate", "--rate", "0.1", boost});
  // From a hash list, which rank 0 alone reads.
  const test::TempDir dir;
  const test::RunResult list = test::run_simkit({"hash", "-r", boost});
  ASSERT_EQ(list.exit_code, 0);
  test::write_file(dir / "boost.ssdeep", list.out);
  test::expect_same_under_mpi({"dedup", "--device", "cpu", "-t", "30", (dir / "boost.ssdeep").string()});
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

// Rank 0 cannot hold what the others send it (out of memory inside the gather): the
// others, about to send, learn it and stop instead of waiting on it forever; one line, from
// rank 0, names it. (Before, they waited: the bounded run would end in a timeout, 124.)
TEST(ClusterCli, RootFailingInsideAGatherStopsEveryRank) {
  SIMKIT_REQUIRE_MPI();
  const test::RunResult fine = test::run_mpi_bounded(3, 120, {cluster_probe(), "gather"});
  ASSERT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_NE(fine.out.find("rank 0: gathered 6291456 bytes"), std::string::npos) << fine.out;  // 1 + 2 + 3 MiB
  const test::RunResult r = test::run_mpi_bounded(3, 120, {cluster_probe(), "root-fails"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("rank 0: failed: out of memory"), std::string::npos) << r.out;
  for (const char* rank : {"rank 1: stopped: rank 0 of 3 on ", "rank 2: stopped: rank 0 of 3 on "})
    EXPECT_NE(r.out.find(rank), std::string::npos) << r.out;
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("rank 0 of 3 on "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("out of memory"), std::string::npos) << r.err;
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

// On a machine with two GPUs or more: each job on one GPU, on every GPU of one process and
// as one rank a GPU gives the same output.
TEST(ClusterGpu, EveryWayEqualsOneGpu) {
  SIMKIT_REQUIRE_MPI();
  if (cuda_device_count() < 2) GTEST_SKIP() << "fewer than two GPUs here";
  const test::TempDir dir;
  const std::string model = (dir / "brown.skd").string();
  ASSERT_EQ(test::run_simkit({"disco", "build", (test::source_dir() / "data/samples/postings/brown-sample.txt").string(),
                              "--words", "6000", "-o", model})
                .exit_code,
            0);
  const std::string boost = (test::source_dir() / "data/samples/boost").string();
  const std::vector<std::vector<std::string>> jobs = {
      {"neighbors", "--model", sample_vectors(), "-k", "7", "king", "king - man + woman", "paris", "water"},
      {"neighbors", "--model", sample_vectors(), "--precision", "fp16", "king", "water"},
      {"neighbors", "--model", sample_vectors(), "--gpu-split", "queries", "-k", "5", "king", "paris", "water"},
      {"disco", "similar", "--all", "--model", model, "--features", "500", "--precision", "tf32", "--kernel", "cublas"},
      {"disco", "similar", "--all", "--model", model, "--form", "sparse"},
      {"dedup", boost},
      {"dedup", "--mode", "edit-rate", "--rate", "0.1", boost}};
  for (std::vector<std::string> args : jobs) {
    std::string job;  // the job's first words (a job may have only two)
    for (std::size_t i = 0; i < std::min<std::size_t>(3, args.size()); ++i) job += (i > 0 ? " " : "") + args[i];
    SCOPED_TRACE(job);
    std::fprintf(stderr, "ClusterGpu: %s\n", job.c_str());
    args.insert(args.end(), {"--device", "cuda:0"});
    const test::RunResult one = test::run_simkit(args);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    args.back() = "cuda:all";
    const test::RunResult all = test::run_simkit(args);
    EXPECT_EQ(all.exit_code, 0) << all.err;
    EXPECT_TRUE(test::same_text(all.out, one.out)) << "--device cuda:all";
    args.back() = "cuda";
    const int ranks_count = cuda_device_count();  // a GPU a rank, every GPU here
    const test::RunResult ranks = test::run_simkit_mpi(ranks_count, args);
    EXPECT_EQ(ranks.exit_code, 0) << ranks.err;
    EXPECT_TRUE(test::same_text(ranks.out, one.out)) << "mpirun -np " << ranks_count << ", a GPU a rank";
  }
}

// The GPUs a --device names, the others hidden from the driver and the names renumbered
// (simkit::hide_unused_gpus): another GPU, or two named in another order, answer as GPU 0.
TEST(ClusterGpu, NamedGpusAnswerAsGpuZero) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "fewer than two GPUs here";
  const std::vector<std::string> job = {"neighbors", "--model", sample_vectors(), "-k", "7", "king", "paris", "--device"};
  const auto run = [&](const std::string& device) {
    std::vector<std::string> args = job;
    args.push_back(device);
    const test::RunResult result = test::run_simkit(args);
    EXPECT_EQ(result.exit_code, 0) << device << ": " << result.err;
    return result.out;
  };
  const std::string one = run("cuda:0");
  ASSERT_FALSE(one.empty());
  for (const std::string device : {"cuda:1", "cuda:1,0", "gpu:1"}) EXPECT_TRUE(test::same_text(run(device), one)) << device;
}

}  // namespace
}  // namespace simkit
