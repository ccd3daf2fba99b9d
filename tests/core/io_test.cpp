// Memory-mapped input and atomic output.
#include <gtest/gtest.h>

#include <filesystem>

#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(MappedFile, ReadsWholeFile) {
  test::TempDir dir;
  test::write_file(dir / "a", "hello\nworld");
  const MappedFile file = MappedFile::open((dir / "a").string());
  EXPECT_EQ(file.text(), "hello\nworld");
  EXPECT_EQ(file.size(), 11u);
}

TEST(MappedFile, EmptyFileHasNoBytes) {
  test::TempDir dir;
  test::write_file(dir / "empty", "");
  EXPECT_EQ(MappedFile::open((dir / "empty").string()).size(), 0u);
}

TEST(MappedFile, MissingFileAndDirectoryAreInputErrors) {
  test::TempDir dir;
  try {
    MappedFile::open((dir / "missing").string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos);
  }
  EXPECT_THROW(MappedFile::open(dir.path().string()), InputError);
}

TEST(OutputFile, CommitReplacesAtomically) {
  test::TempDir dir;
  const fs::path target = dir / "out.txt";
  test::write_file(target, "old");
  {
    OutputFile out(target.string());
    out.write("new content");
    EXPECT_EQ(test::read_file(target), "old") << "nothing visible before commit";
    out.commit();
  }
  EXPECT_EQ(test::read_file(target), "new content");
  EXPECT_EQ(entries(dir.path()), 1u) << "no temporary file left";
}

TEST(OutputFile, WithoutCommitLeavesOldContentAndNoTemporary) {
  test::TempDir dir;
  const fs::path target = dir / "out.txt";
  test::write_file(target, "old");
  {
    OutputFile out(target.string());
    out.write("half");
  }
  EXPECT_EQ(test::read_file(target), "old");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(OutputFile, NewFileAppearsOnlyOnCommit) {
  test::TempDir dir;
  const fs::path target = dir / "fresh.bin";
  {
    OutputFile out(target.string());
    out.write(std::string(1 << 20, 'x'));
    EXPECT_FALSE(fs::exists(target));
  }
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(entries(dir.path()), 0u);
  write_file_atomically(target.string(), "abc");
  EXPECT_EQ(test::read_file(target), "abc");
}

TEST(OutputFile, MissingFolderIsAnInputError) {
  test::TempDir dir;
  EXPECT_THROW(OutputFile((dir / "no" / "such" / "file").string()), InputError);
}

}  // namespace
}  // namespace simkit
