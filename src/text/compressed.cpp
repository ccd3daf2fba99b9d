// Files read as streams (byte_stream.hpp): plain, or decompressed as they are read by
// zlib, libbz2 and libzstd; and whole compressed text files for open_text.
#include <bzlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "text/byte_stream.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"

namespace simkit {

namespace {

constexpr std::size_t kInput = 1 << 20;  // compressed bytes read at a time

[[noreturn]] void damaged(const std::string& path, std::string_view format, std::string_view why) {
  throw InputError(Location{path}, fmt::format("{} data is damaged or cut short ({})", format, why));
}

class FileStream final : public ByteStream {
 public:
  explicit FileStream(const std::string& path) : ByteStream(path) {
    if (path == "-") {
      fd_ = 0;
      return;
    }
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw FileError(Location{.file = path}, fmt::format("cannot open: {}", std::strerror(errno)), errno);
    struct stat info {};
    if (::fstat(fd_, &info) == 0 && S_ISDIR(info.st_mode)) {
      ::close(fd_);
      throw FileError(Location{.file = path}, "is a directory, expected a file", EISDIR);
    }
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  ~FileStream() override {
    if (fd_ > 0) ::close(fd_);
  }
  FileStream(const FileStream&) = delete;
  FileStream& operator=(const FileStream&) = delete;

  std::size_t read(char* out, std::size_t capacity) override {
    for (;;) {
      const ssize_t n = ::read(fd_, out, capacity);
      if (n >= 0) {
        consumed_ += static_cast<std::uint64_t>(n);
        return static_cast<std::size_t>(n);
      }
      if (errno != EINTR) throw FileError(Location{.file = path_}, fmt::format("cannot read: {}", std::strerror(errno)), errno);
    }
  }
  std::uint64_t consumed() const override { return consumed_; }

 private:
  int fd_ = -1;
  std::uint64_t consumed_ = 0;
};

// What the decoders share: the file, a window of its bytes (the last `left_` of them not
// yet decoded), and where that window starts in the file.
class Decoder : public ByteStream {
 public:
  std::uint64_t consumed() const override { return file_.consumed(); }

 protected:
  // Opens the file and checks that it starts with `magic`.
  Decoder(const std::string& path, std::string_view magic, const char* not_this_format)
      : ByteStream(path), file_(path), buffer_(kInput) {
    fill_to(magic.size());
    expect(magic, not_this_format);
  }
  // Undecoded input in hand (read more when none is); false at the end of the file.
  bool have_input() {
    if (left_ == 0 && refill()) left_ = size_;
    return left_ > 0;
  }
  // After a member (gzip) or stream (bzip2) ended: whether another follows, starting with
  // `magic` (trailing bytes of anything else are refused).
  bool next_member(std::string_view magic, std::string_view format) {
    fill_to(magic.size());
    if (left_ == 0) return false;
    expect(magic, std::string("trailing bytes after the ") + std::string(format) + " data");
    return true;
  }
  char* unread() { return buffer_.data() + (size_ - left_); }

  FileStream file_;
  std::size_t left_ = 0;  // undecoded bytes at the window's end

 private:
  // More input after the undecoded bytes (moved to the window's front); false at the end.
  bool refill() {
    if (left_ > 0) std::memmove(buffer_.data(), unread(), left_);
    start_ += size_ - left_;
    const std::size_t n = file_.read(buffer_.data() + left_, buffer_.size() - left_);
    size_ = left_ + n;
    return n > 0;
  }
  void fill_to(std::size_t count) {
    while (left_ < count && refill()) left_ = size_;
  }
  void expect(std::string_view magic, const std::string& message) {
    if (left_ < magic.size() || std::memcmp(unread(), magic.data(), magic.size()) != 0)
      throw InputError(Location::at_offset(path_, start_ + (size_ - left_)), message);
  }

  std::vector<char> buffer_;
  std::size_t size_ = 0;     // bytes in the window
  std::uint64_t start_ = 0;  // the file offset of the window's first byte
};

// gzip: one or more members back to back.
class GzipStream final : public Decoder {
 public:
  explicit GzipStream(const std::string& path)
      : Decoder(path, "\x1f\x8b", "not gzip data (wrong magic); the name ends in .gz") {
    if (inflateInit2(&z_, 15 + 32) != Z_OK) throw Failure("zlib: cannot start inflating");
  }
  ~GzipStream() override { inflateEnd(&z_); }

  std::size_t read(char* out, std::size_t capacity) override {
    if (done_ || capacity == 0) return 0;
    capacity = std::min<std::size_t>(capacity, 1u << 30);
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(capacity);
    while (z_.avail_out == capacity) {
      if (!have_input()) damaged(path_, "gzip", "unexpected end of data");
      z_.next_in = reinterpret_cast<Bytef*>(unread());
      z_.avail_in = static_cast<uInt>(left_);
      const int status = inflate(&z_, Z_NO_FLUSH);
      left_ = z_.avail_in;
      if (status == Z_STREAM_END) {
        if (!next_member("\x1f\x8b", "gzip")) {
          done_ = true;
          break;
        }
        inflateReset(&z_);
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        damaged(path_, "gzip", z_.msg != nullptr ? z_.msg : "inflate failed");
      }
    }
    return capacity - z_.avail_out;
  }

 private:
  z_stream z_{};
  bool done_ = false;
};

// bzip2: one or more streams back to back.
class Bzip2Stream final : public Decoder {
 public:
  explicit Bzip2Stream(const std::string& path)
      : Decoder(path, "BZh", "not bzip2 data (wrong magic); the name ends in .bz2") {
    start_stream();
  }
  ~Bzip2Stream() override {
    if (open_) BZ2_bzDecompressEnd(&b_);
  }

  std::size_t read(char* out, std::size_t capacity) override {
    if (done_ || capacity == 0) return 0;
    capacity = std::min<std::size_t>(capacity, 1u << 30);
    std::size_t room = capacity;  // (a new stream's state starts empty: kept here)
    while (room == capacity) {
      if (!have_input()) damaged(path_, "bzip2", "unexpected end of data");
      b_.next_in = unread();
      b_.avail_in = static_cast<unsigned>(left_);
      b_.next_out = out + (capacity - room);
      b_.avail_out = static_cast<unsigned>(room);
      const int status = BZ2_bzDecompress(&b_);
      left_ = b_.avail_in;
      room = b_.avail_out;
      if (status == BZ_STREAM_END) {
        BZ2_bzDecompressEnd(&b_);
        open_ = false;
        if (!next_member("BZh", "bzip2")) {
          done_ = true;
          break;
        }
        start_stream();
      } else if (status != BZ_OK) {
        damaged(path_, "bzip2", fmt::format("error {}", status));
      }
    }
    return capacity - room;
  }

 private:
  void start_stream() {
    b_ = bz_stream{};
    if (BZ2_bzDecompressInit(&b_, 0, 0) != BZ_OK) throw Failure("libbz2: cannot start decompressing");
    open_ = true;
  }
  bz_stream b_{};
  bool open_ = false, done_ = false;
};

// Zstandard: frames back to back are one stream to the decoder.
class ZstdStream final : public Decoder {
 public:
  explicit ZstdStream(const std::string& path)
      : Decoder(path, "\x28\xb5\x2f\xfd", "not Zstandard data (wrong magic); the name ends in .zst") {
    z_ = ZSTD_createDStream();
    if (z_ == nullptr) throw Failure("libzstd: cannot start decompressing");
    ZSTD_initDStream(z_);
  }
  ~ZstdStream() override { ZSTD_freeDStream(z_); }

  std::size_t read(char* out, std::size_t capacity) override {
    if (capacity == 0) return 0;
    ZSTD_outBuffer output{out, capacity, 0};
    while (output.pos == 0) {
      if (!have_input()) {
        // The end of the file: what the decoder still holds, and the last frame complete.
        if (last_ == 0) return 0;
        ZSTD_inBuffer none{nullptr, 0, 0};
        last_ = ZSTD_decompressStream(z_, &output, &none);
        if (ZSTD_isError(last_)) damaged(path_, "Zstandard", ZSTD_getErrorName(last_));
        if (output.pos == 0) damaged(path_, "Zstandard", "unexpected end of data");
        return output.pos;
      }
      ZSTD_inBuffer input{unread(), left_, 0};
      last_ = ZSTD_decompressStream(z_, &output, &input);
      if (ZSTD_isError(last_)) damaged(path_, "Zstandard", ZSTD_getErrorName(last_));
      left_ -= input.pos;
    }
    return output.pos;
  }

 private:
  ZSTD_DStream* z_ = nullptr;
  std::size_t last_ = 0;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::unique_ptr<ByteStream> open_byte_stream(const std::string& path) {
  if (path != "-") {
    if (ends_with(path, ".gz")) return std::make_unique<GzipStream>(path);
    if (ends_with(path, ".bz2")) return std::make_unique<Bzip2Stream>(path);
    if (ends_with(path, ".zst")) return std::make_unique<ZstdStream>(path);
  }
  return std::make_unique<FileStream>(path);
}

std::string read_all(ByteStream& stream) {
  std::string out;
  std::vector<char> buffer(1 << 20);
  while (const std::size_t n = stream.read(buffer.data(), buffer.size())) out.append(buffer.data(), n);
  return out;
}

MappedFile open_text(const std::string& path) {
  if (!ends_with(path, ".gz") && !ends_with(path, ".bz2") && !ends_with(path, ".zst")) return MappedFile::open(path);
  const std::unique_ptr<ByteStream> stream = open_byte_stream(path);
  return MappedFile::from_bytes(path, read_all(*stream));
}

}  // namespace simkit
