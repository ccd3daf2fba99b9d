// Compressed text inputs: what zlib, libbz2 and libzstd write reads back as the text,
// concatenated members too; wrong or damaged data is refused naming the file.
#include <gtest/gtest.h>

#include <bzlib.h>
#include <zlib.h>
#include <zstd.h>

#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

std::string gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string bzip2(const std::string& text) {
  std::string out(text.size() + text.size() / 100 + 700, '\0');
  auto size = static_cast<unsigned>(out.size());
  EXPECT_EQ(BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(text.data()),
                                     static_cast<unsigned>(text.size()), 9, 0, 0),
            BZ_OK);
  out.resize(size);
  return out;
}

std::string zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

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

}  // namespace
}  // namespace simkit
