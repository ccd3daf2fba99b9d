// Memory-mapped input and atomic output.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/binary_io.hpp"
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

// Writes that pass 64 MiB ask the kernel to start writing the file out as it grows: the
// file is still whole and only appears on commit.
TEST(OutputFile, LargeFilesWrittenOutAsTheyGrowAreWhole) {
  test::TempDir dir;
  const fs::path target = dir / "big.txt";
  std::string want;
  {
    OutputFile out(target.string());
    for (int piece = 0; piece < 7; ++piece) {  // 7 x 21 MiB: the 64 and 128 MiB boundaries crossed
      std::string text((std::size_t{21} << 20) + static_cast<std::size_t>(piece), static_cast<char>('a' + piece));
      out.write(text);
      want += text;
    }
    EXPECT_FALSE(fs::exists(target)) << "nothing visible before commit";
    out.commit();
  }
  EXPECT_EQ(fs::file_size(target), want.size());
  EXPECT_TRUE(test::read_file(target) == want);
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

// The writer's checksum in pieces equals the reader's over the written bytes, whatever the
// write sizes and wherever the pieces end (on a write's edge, inside one, an empty file);
// with pieces of 0 bytes it is one XXH3-64 of everything.
TEST(HashingWriter, PiecesEqualTheReadersChecksum) {
  test::TempDir dir;
  test::Random random;
  SCOPED_TRACE("seed " + std::to_string(random.seed()));
  for (const std::uint64_t piece : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{64}}) {
    for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64},
                                   std::size_t{65}, std::size_t{448}, std::size_t{1000}}) {
      std::string bytes(size, '\0');
      for (char& c : bytes) c = static_cast<char>(random.integer(0, 255));
      const std::string path = (dir / "h").string();
      {
        OutputFile out(path);
        detail::HashingWriter w(out, piece);
        for (std::size_t at = 0; at < size;) {  // writes of 0 to 100 bytes
          const std::size_t n = std::min<std::size_t>(size - at, static_cast<std::size_t>(random.integer(0, 100)));
          w.write(bytes.data() + at, n);
          at += n;
        }
        w.finish();
        out.commit();
      }
      const std::string written = test::read_file(path);
      ASSERT_EQ(written.size(), size + 8);
      EXPECT_EQ(written.substr(0, size), bytes);
      const std::uint64_t expected = piece == 0 ? XXH3_64bits(bytes.data(), size)
                                                : detail::piece_checksum(bytes.data(), size, piece);
      EXPECT_EQ(detail::load<std::uint64_t>(written.data() + size), expected) << "piece " << piece << ", size " << size;
    }
  }
  // The rule as docs/formats.md states it, written out here: each piece's XXH3-64 (the
  // last piece shorter), then the XXH3-64 of those values, little-endian, one after another.
  std::string spec(1000, '\0');
  for (char& c : spec) c = static_cast<char>(random.integer(0, 255));
  std::string sums;
  for (std::size_t at = 0; at < spec.size(); at += 64) {
    const std::uint64_t h = XXH3_64bits(spec.data() + at, std::min<std::size_t>(64, spec.size() - at));
    for (int b = 0; b < 8; ++b) sums += static_cast<char>(h >> (8 * b) & 0xff);
  }
  EXPECT_EQ(detail::piece_checksum(spec.data(), spec.size(), 64), XXH3_64bits(sums.data(), sums.size()));
  // Pieces change the sum: a file's pieces are not interchangeable with one pass.
  const std::string text = "the quick brown fox jumps over the lazy dog";
  EXPECT_NE(detail::piece_checksum(text.data(), text.size(), 8), XXH3_64bits(text.data(), text.size()));
}

}  // namespace
}  // namespace simkit
