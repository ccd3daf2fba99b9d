// Compressed text inputs (.gz, .bz2, .zst) through zlib, libbz2 and libzstd, decompressed
// into memory and handed on as a MappedFile of the text.
#include <bzlib.h>
#include <zlib.h>
#include <zstd.h>

#include <string>

#include <fmt/format.h>

#include "simkit/error.hpp"
#include "simkit/io.hpp"

namespace simkit {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[noreturn]] void damaged(const std::string& path, std::string_view format, std::string_view why) {
  throw InputError(Location{path}, fmt::format("{} data is damaged or cut short ({})", format, why));
}

// gzip: one or more members back to back.
std::string gunzip(std::string_view in, const std::string& path) {
  if (in.size() < 2 || static_cast<unsigned char>(in[0]) != 0x1f || static_cast<unsigned char>(in[1]) != 0x8b)
    throw InputError(Location::at_offset(path, 0), "not gzip data (wrong magic); the name ends in .gz");
  std::string out;
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw Failure("zlib: cannot start inflating");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), 1u << 30));
  std::size_t fed = z.avail_in;
  char buffer[1 << 16];
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    const int status = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (status == Z_STREAM_END) {
      const std::size_t used = fed - z.avail_in;
      if (used == in.size() && z.avail_in == 0) break;
      // Another member follows (or trailing bytes, refused by the reset's magic check).
      const std::size_t at = used;
      if (in.size() - at < 2 || static_cast<unsigned char>(in[at]) != 0x1f || static_cast<unsigned char>(in[at + 1]) != 0x8b) {
        inflateEnd(&z);
        throw InputError(Location::at_offset(path, at), "trailing bytes after the gzip data");
      }
      inflateReset(&z);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + at));
      z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size() - at, 1u << 30));
      fed = at + z.avail_in;
      continue;
    }
    if (status != Z_OK && status != Z_BUF_ERROR) {
      const std::string why = z.msg != nullptr ? z.msg : "inflate failed";
      inflateEnd(&z);
      damaged(path, "gzip", why);
    }
    if (z.avail_in == 0 && z.avail_out != 0) {
      if (fed < in.size()) {  // more than 1 GiB of input: feed the next piece
        z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size() - fed, 1u << 30));
        fed += z.avail_in;
        continue;
      }
      inflateEnd(&z);
      damaged(path, "gzip", "unexpected end of data");
    }
  }
  inflateEnd(&z);
  return out;
}

// bzip2: one or more streams back to back.
std::string bunzip(std::string_view in, const std::string& path) {
  if (in.size() < 3 || in.substr(0, 3) != "BZh")
    throw InputError(Location::at_offset(path, 0), "not bzip2 data (wrong magic); the name ends in .bz2");
  std::string out;
  std::size_t at = 0;
  char buffer[1 << 16];
  while (at < in.size()) {
    bz_stream b{};
    if (BZ2_bzDecompressInit(&b, 0, 0) != BZ_OK) throw Failure("libbz2: cannot start decompressing");
    b.next_in = const_cast<char*>(in.data() + at);
    b.avail_in = static_cast<unsigned>(std::min<std::size_t>(in.size() - at, 1u << 30));
    const std::size_t fed = at + b.avail_in;
    int status = BZ_OK;
    while (status != BZ_STREAM_END) {
      b.next_out = buffer;
      b.avail_out = sizeof buffer;
      status = BZ2_bzDecompress(&b);
      out.append(buffer, sizeof buffer - b.avail_out);
      if (status != BZ_OK && status != BZ_STREAM_END) {
        BZ2_bzDecompressEnd(&b);
        damaged(path, "bzip2", fmt::format("error {}", status));
      }
      if (status == BZ_OK && b.avail_in == 0 && b.avail_out != 0) {
        BZ2_bzDecompressEnd(&b);
        damaged(path, "bzip2", fed < in.size() ? "a stream over 1 GiB" : "unexpected end of data");
      }
    }
    at = fed - b.avail_in;
    BZ2_bzDecompressEnd(&b);
    if (at < in.size() && (in.size() - at < 3 || in.substr(at, 3) != "BZh"))
      throw InputError(Location::at_offset(path, at), "trailing bytes after the bzip2 data");
  }
  return out;
}

std::string unzstd(std::string_view in, const std::string& path) {
  if (in.size() < 4 || static_cast<unsigned char>(in[0]) != 0x28 || static_cast<unsigned char>(in[1]) != 0xb5 ||
      static_cast<unsigned char>(in[2]) != 0x2f || static_cast<unsigned char>(in[3]) != 0xfd)
    throw InputError(Location::at_offset(path, 0), "not Zstandard data (wrong magic); the name ends in .zst");
  ZSTD_DStream* z = ZSTD_createDStream();
  if (z == nullptr) throw Failure("libzstd: cannot start decompressing");
  ZSTD_initDStream(z);
  std::string out;
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  char buffer[1 << 16];
  std::size_t last = 0;
  while (input.pos < input.size) {
    ZSTD_outBuffer output{buffer, sizeof buffer, 0};
    last = ZSTD_decompressStream(z, &output, &input);
    if (ZSTD_isError(last)) {
      const std::string why = ZSTD_getErrorName(last);
      ZSTD_freeDStream(z);
      damaged(path, "Zstandard", why);
    }
    out.append(buffer, output.pos);
  }
  while (last != 0) {  // the frame may still hold output
    ZSTD_outBuffer output{buffer, sizeof buffer, 0};
    last = ZSTD_decompressStream(z, &output, &input);
    if (ZSTD_isError(last)) {
      ZSTD_freeDStream(z);
      damaged(path, "Zstandard", ZSTD_getErrorName(last));
    }
    out.append(buffer, output.pos);
    if (output.pos == 0) break;  // no progress without more input: cut short
  }
  ZSTD_freeDStream(z);
  if (last != 0) damaged(path, "Zstandard", "unexpected end of data");
  return out;
}

}  // namespace

MappedFile open_text(const std::string& path) {
  const bool gz = ends_with(path, ".gz"), bz2 = ends_with(path, ".bz2"), zst = ends_with(path, ".zst");
  if (!gz && !bz2 && !zst) return MappedFile::open(path);
  const MappedFile file = MappedFile::open(path);
  const std::string text = gz ? gunzip(file.text(), path) : bz2 ? bunzip(file.text(), path) : unzstd(file.text(), path);
  return MappedFile::from_bytes(path, text);
}

}  // namespace simkit
