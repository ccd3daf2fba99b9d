// Compressed text inputs: what zlib, libbz2 and libzstd write reads back as the text,
// concatenated members too; wrong or damaged data is refused naming the file.
#include <gtest/gtest.h>

#include "text/byte_stream.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

using test::bzip2;
using test::gzip;
using test::zstd;

std::string refusal(const std::string& path) {
  return test::input_error_of([&] { open_text(path); });
}

TEST(Compressed, EachFormatReadsBack) {
  test::Random random;
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 200000; ++i) text += static_cast<char>('a' + random.integer(0, 25)) + std::string(i % 17 ? "" : "\n");
  const std::string half = text.substr(0, text.size() / 2), rest = text.substr(text.size() / 2);
  const std::pair<const char*, std::string> cases[] = {
      {"t.gz", gzip(text)},   {"two.gz", gzip(half) + gzip(rest)},   {"t.bz2", bzip2(text)},
      {"two.bz2", bzip2(half) + bzip2(rest)}, {"t.zst", zstd(text)}, {"two.zst", zstd(half) + zstd(rest)},
      {"empty.gz", gzip("")}, {"plain.txt", text}};
  for (const auto& [name, bytes] : cases) {
    test::write_file(dir / name, bytes);
    EXPECT_EQ(open_text((dir / name).string()).text(), std::string_view(std::string(name) == "empty.gz" ? "" : text))
        << name;
    const std::string cut = bytes.substr(0, bytes.size() * 2 / 3);
    if (std::string(name) == "plain.txt" || std::string(name) == "empty.gz") continue;
    test::write_file(dir / (std::string("cut-") + name), cut);
    EXPECT_NE(refusal((dir / (std::string("cut-") + name)).string()).find("damaged or cut short"), std::string::npos)
        << name;
  }
  test::write_file(dir / "fake.gz", "plain text, not gzip\n");
  EXPECT_NE(refusal((dir / "fake.gz").string()).find("fake.gz: byte 0: not gzip data"), std::string::npos);
  test::write_file(dir / "fake.zst", "plain");
  EXPECT_NE(refusal((dir / "fake.zst").string()).find("not Zstandard data"), std::string::npos);
  test::write_file(dir / "tail.bz2", bzip2(text) + "junk");
  EXPECT_NE(refusal((dir / "tail.bz2").string()).find("trailing bytes"), std::string::npos);
}

TEST(Compressed, StreamsReadInAnyPiecesPastTheInputWindow) {
  // Several MB of text (its compressed forms span more than the 1 MiB input window, the
  // second member or stream starting inside it), read in pieces of odd sizes.
  test::Random random;
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 3000000; ++i) text += static_cast<char>('a' + random.integer(0, 25)) + std::string(i % 23 ? "" : "\n");
  const std::string half = text.substr(0, text.size() / 3), rest = text.substr(text.size() / 3);
  const std::pair<const char*, std::string> cases[] = {{"s.gz", gzip(half) + gzip(rest)},
                                                       {"s.bz2", bzip2(half) + bzip2(rest)},
                                                       {"s.zst", zstd(half) + zstd(rest)},
                                                       {"s.txt", text}};
  for (const auto& [name, bytes] : cases) {
    test::write_file(dir / name, bytes);
    const auto stream = open_byte_stream((dir / name).string());
    std::string back;
    std::vector<char> piece(70000);
    for (std::size_t size = 1;; size = size * 7 % 65521 + 1) {
      const std::size_t n = stream->read(piece.data(), size);
      if (n == 0) break;
      ASSERT_LE(n, size);
      back.append(piece.data(), n);
    }
    EXPECT_EQ(back.size(), text.size()) << name;
    EXPECT_TRUE(back == text) << name;
    EXPECT_EQ(stream->consumed(), bytes.size()) << name;
  }
}

}  // namespace
}  // namespace simkit
