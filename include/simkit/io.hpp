// Files in and out: memory-mapped input, atomic output (temporary file + rename).
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace simkit {

// A read-only view of a whole file. Regular files are memory-mapped; standard input
// ("-") and other non-seekable files are read into memory.
class MappedFile {
 public:
  MappedFile() = default;
  // Throws InputError naming the path when it cannot be opened or read.
  static MappedFile open(const std::string& path);
  // A copy of bytes already in memory, named `name` in messages.
  static MappedFile from_bytes(std::string name, std::string_view bytes);

  const std::string& path() const noexcept { return path_; }
  const char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::string_view text() const noexcept { return {data_, size_}; }
  std::span<const std::byte> bytes() const noexcept {
    return {reinterpret_cast<const std::byte*>(data_), size_};
  }
  // Tells the kernel the file will be read front to back, soon (a hint, never fails).
  void advise_sequential() const noexcept;
  // Tells the kernel the whole file will be needed soon, in any order (a hint).
  void advise_will_need() const noexcept;

 private:
  struct Storage;
  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<Storage> storage_;
};

// A text file as MappedFile::open gives it, decompressed first when its name ends in
// .gz (gzip, concatenated members too), .bz2 (bzip2, concatenated streams too) or .zst
// (Zstandard). The whole text is held in memory. Throws InputError naming the file for
// data that is not of its format or is damaged or cut short.
MappedFile open_text(const std::string& path);

// How a text input is read: as text, as a Wikipedia XML dump (its articles' running
// text), or by what its first bytes show.
enum class TextFormat { automatic, text, wikipedia };

// "auto", "text" or "wikipedia"; throws UsageError naming --input-format otherwise.
TextFormat parse_text_format(const std::string& name);

// An output that appears under its final name only when commit() succeeds.
// Until then it is an unnamed file (O_TMPFILE) or, where the file system lacks that,
// a uniquely named hidden temporary beside the target that is removed on failure,
// on exceptions and on SIGINT/SIGTERM. "-" or "" writes to standard output.
// With `write` false it writes nowhere and commit() does nothing: the ranks of a run
// other than rank 0 (include/simkit/cluster.hpp), which compute but do not write.
class OutputFile {
 public:
  explicit OutputFile(std::string path, bool write = true);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* stream() const noexcept { return stream_; }
  void write(std::string_view bytes);
  bool is_stdout() const noexcept { return to_stdout_; }
  const std::string& path() const noexcept { return path_; }
  // Flushes, syncs and moves the file into place. Throws Failure on any I/O error.
  void commit();

 private:
  void discard() noexcept;
  std::string path_;
  std::string temp_path_;  // empty for O_TMPFILE and stdout
  std::FILE* stream_ = nullptr;
  int fd_ = -1;
  bool to_stdout_ = false;
  bool nowhere_ = false;
  bool committed_ = false;
  int slot_ = -1;  // entry in the signal-cleanup table
};

// Installs SIGINT/SIGTERM handlers that remove pending temporary outputs and exit
// with 128 + signal number. Call once from main().
void install_interrupt_cleanup();

// Writes a whole file atomically (OutputFile + commit).
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace simkit
