// An interrupted or killed run never leaves a half-written output: the old file stays
// as it was and no temporary file is left beside it.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

std::string sample() { return (test::source_dir() / "data/samples/vectors.vec").string(); }

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Starts a session writing to out/answers.tsv over an existing file, feeds it enough
// queries to have written well past its buffers, and waits until it has answered them.
test::Child start_writer(const test::TempDir& dir, const std::vector<std::string>& env = {}) {
  fs::create_directory(dir / "out");
  test::write_file(dir / "out" / "answers.tsv", "old content\n");
  test::Child child = test::spawn_simkit({"neighbors", "--model", sample(), "--device", "cpu", "--format", "tsv",
                                          "--timings", "-o", (dir / "out" / "answers.tsv").string()},
                                         dir.path(), env);
  std::string queries;
  for (int i = 0; i < 3000; ++i) queries += i % 2 ? "king - man + woman\n" : "water\n";
  EXPECT_EQ(::write(child.input, queries.data(), queries.size()), static_cast<ssize_t>(queries.size()));
  // The session answers and keeps waiting for more input.
  for (int waited = 0; waited < 600; ++waited) {
    if (test::read_file(child.err).find("3000 queries") != std::string::npos ||
        test::lines_of(test::read_file(child.err)).size() >= 3)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return child;
}

// The output folder holds the old answers.tsv, unchanged, and nothing else.
void expect_only_the_old_file(const test::TempDir& dir) {
  EXPECT_EQ(test::read_file(dir / "out" / "answers.tsv"), "old content\n");
  EXPECT_EQ(entries(dir / "out"), std::vector<std::string>{"answers.tsv"});
}

TEST(AtomicOutput, SigkillLeavesTheOldFileAndNoTemporary) {
  test::TempDir dir;
  test::Child child = start_writer(dir);
  EXPECT_EQ(test::signal_and_wait(child, SIGKILL), 128 + SIGKILL);
  expect_only_the_old_file(dir);
}

TEST(AtomicOutput, SigintExits130AndLeavesTheOldFile) {
  test::TempDir dir;
  test::Child child = start_writer(dir);
  EXPECT_EQ(test::signal_and_wait(child, SIGINT), 130);
  expect_only_the_old_file(dir);
}

TEST(AtomicOutput, NamedTemporaryFallbackIsRemovedOnSigint) {
  test::TempDir dir;
  test::Child child = start_writer(dir, {"SIMKIT_NO_TMPFILE=1"});
  bool saw_temporary = false;
  for (const std::string& name : entries(dir / "out")) saw_temporary |= name.find(".simkit-tmp-") != std::string::npos;
  EXPECT_TRUE(saw_temporary) << "the fallback writes a named temporary";
  EXPECT_EQ(test::signal_and_wait(child, SIGINT), 130);
  expect_only_the_old_file(dir);
}

TEST(AtomicOutput, AfterSigkillOfTheFallbackALaterRunStillSucceeds) {
  test::TempDir dir;
  test::Child child = start_writer(dir, {"SIMKIT_NO_TMPFILE=1"});
  test::signal_and_wait(child, SIGKILL);
  EXPECT_EQ(test::read_file(dir / "out" / "answers.tsv"), "old content\n");
  // The leftover has a unique name (process id and random bits): nothing trips over it.
  const auto r = test::run_simkit({"neighbors", "--model", sample(), "--device", "cpu", "--format", "tsv", "-o",
                                   (dir / "out" / "answers.tsv").string(), "water"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::lines_of(test::read_file(dir / "out" / "answers.tsv")).size(), 10u);
}

TEST(AtomicOutput, CompletedSessionReplacesTheFile) {
  test::TempDir dir;
  test::Child child = start_writer(dir);
  ::close(child.input);
  child.input = -1;
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(test::lines_of(test::read_file(dir / "out" / "answers.tsv")).size(), 30000u);
  EXPECT_EQ(entries(dir / "out"), std::vector<std::string>{"answers.tsv"});
}

TEST(MemoryBudget, TinyBudgetAnswersLikeTheDefault) {
  const std::vector<std::string> base = {"neighbors", "--model", sample(), "--device", "cpu", "--format", "tsv",
                                         "king", "king - man + woman", "water"};
  const auto normal = test::run_simkit(base);
  auto args = base;
  args.insert(args.begin() + 1, {"--memory-budget", "4K"});
  const auto tiny = test::run_simkit(args);
  ASSERT_EQ(normal.exit_code, 0);
  ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
  EXPECT_EQ(tiny.out, normal.out);
}

}  // namespace
}  // namespace simkit
