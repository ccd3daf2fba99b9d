// simkit hash through the real program, beside the real ssdeep program (the test peer
// the setup script installs): the same list, line for line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

// A folder of real files (the bundled Boost headers and word vectors, an empty file), a
// subfolder and a link to a file.
void fill(const fs::path& dir) {
  fs::create_directories(dir / "sub");
  std::vector<fs::path> files = {test::source_dir() / "data/samples/vectors.vec"};
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "data/samples/boost/mpl"))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (std::size_t n = 0; n < files.size() && n < 40; ++n)
    fs::copy_file(files[n], (n % 2 ? dir : dir / "sub") / files[n].filename());
  test::write_file(dir / "empty", "");
  fs::create_symlink(dir / "sub", dir / "link_to_sub");
}

std::vector<std::string> sorted_body(const std::string& text) {
  std::vector<std::string> lines = test::lines_of(text);
  if (!lines.empty()) lines.erase(lines.begin());
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(HashCli, ListEqualsSsdeepsAndItReadsIt) {
  ASSERT_EQ(std::system("command -v ssdeep > /dev/null"), 0) << "ssdeep is missing: run scripts/setup.sh";
  test::TempDir dir;
  fill(dir / "files");
  const std::string root = (dir / "files").string();
  const test::RunResult ours = test::run_simkit({"hash", "-r", root});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const std::string theirs = test::run_shell("ssdeep -r '" + root + "' 2>/dev/null");
  EXPECT_EQ(test::lines_of(ours.out).front(), test::lines_of(theirs).front());
  EXPECT_EQ(sorted_body(ours.out), sorted_body(theirs));
  EXPECT_GE(sorted_body(ours.out).size(), 60u);  // the linked folder is listed twice

  // ssdeep matches our list against the files themselves: every file matches its own line.
  test::write_file(dir / "ours.txt", ours.out);
  const std::string matches = test::run_shell("ssdeep -s -r -m '" + (dir / "ours.txt").string() + "' '" + root + "'");
  EXPECT_GE(test::lines_of(matches).size(), 30u);
  // ssdeep matches our list against itself: the files listed twice (the linked folder)
  // are among the pairs.
  const std::string pairs = test::run_shell("ssdeep -s -x '" + (dir / "ours.txt").string() + "'");
  EXPECT_NE(pairs.find("link_to_sub"), std::string::npos) << pairs.substr(0, 500);
}

TEST(HashCli, FilesAsGivenAndOutputFile) {
  test::TempDir dir;
  test::write_file(dir / "a.txt", std::string(5000, 'x') + "some text that varies 12345");
  const std::string file = (dir / "a.txt").string(), out = (dir / "list.txt").string();
  const test::RunResult r = test::run_simkit({"hash", "--no-header", "-o", out, file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_file(out), test::run_shell("ssdeep -s '" + file + "' | tail -n +2"));
}

TEST(HashCli, BadInputGetsOneLineAndNoOutput) {
  test::TempDir dir;
  fs::create_directories(dir / "empty_dir");
  test::write_file(dir / "f", "x");
  const std::string out = (dir / "out.txt").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{(dir / "missing").string()}, "no such file"},
      {{(dir / "empty_dir").string()}, "is a directory"},
      {{"-r", (dir / "empty_dir").string()}, "holds no file"},
      {{(dir / "f").string(), (dir / "missing").string()}, "no such file"},
  };
  for (const auto& [paths, words] : cases) {
    std::vector<std::string> args = {"hash", "-o", out};
    args.insert(args.end(), paths.begin(), paths.end());
    test::expect_refused(args, words, out);
  }
}

}  // namespace
}  // namespace simkit
