// A file's bytes read front to back, decompressed as they come when the name ends in
// .gz (gzip, concatenated members too), .bz2 (bzip2, concatenated streams too) or .zst
// (Zstandard): inputs of any size in bounded memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace simkit {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Up to `capacity` bytes into `out`; 0 only at the end. Throws InputError naming the
  // file (and the byte of the file) for data that is not of its format, damaged or cut
  // short.
  virtual std::size_t read(char* out, std::size_t capacity) = 0;
  // Bytes of the file itself consumed so far (compressed ones for compressed files).
  virtual std::uint64_t consumed() const = 0;
  const std::string& path() const noexcept { return path_; }

 protected:
  explicit ByteStream(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// "-" reads standard input (never decompressed). Throws InputError when the file cannot
// be opened or is a directory.
std::unique_ptr<ByteStream> open_byte_stream(const std::string& path);

// Reads a stream to its end into one string (for inputs that must be whole).
std::string read_all(ByteStream& stream);

}  // namespace simkit
