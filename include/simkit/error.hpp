// Errors that carry where in an input a problem was found.
// The command line maps them to exit codes: InputError/UsageError -> 2, anything else -> 1.
// The Python module raises InputError and UsageError as ValueError, FileError as OSError.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace simkit {

// A position in an input. Every field may be unknown.
struct Location {
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
  std::string file;                  // as the user named it; "-" for standard input
  std::uint64_t line = 0;            // 1-based, 0 = unknown
  std::uint64_t column = 0;          // 1-based, 0 = unknown
  std::uint64_t offset = kUnknown;   // byte offset from the start of the file

  static Location at_line(std::string file, std::uint64_t line, std::uint64_t column = 0);
  static Location at_offset(std::string file, std::uint64_t offset);
};

// "file:12:5", "file: byte 1234", "file" (empty when nothing is known).
std::string to_string(const Location& where);

// Base of simkit's exceptions; what() is a single line written for the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The input is malformed or names something that does not exist.
class InputError : public Error {
 public:
  InputError(Location where, const std::string& reason);
  const Location& where() const noexcept { return where_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  Location where_;
  std::string reason_;
};

// A file could not be opened, read, listed or written (the input names something that
// does not exist, a directory, a file without permission). `error_number` is the errno
// value that says why (ENOENT, EISDIR, EACCES, ...): the Python module raises it as the
// matching OSError.
class FileError : public InputError {
 public:
  FileError(Location where, const std::string& reason, int error_number);
  int error_number() const noexcept { return error_number_; }

 private:
  int error_number_;
};

// The command line is wrong (unknown option, bad value, conflicting flags).
class UsageError : public Error {
 public:
  using Error::Error;
};

// The machine failed us: I/O, memory, CUDA. Not the user's input.
class Failure : public Error {
 public:
  using Error::Error;
};

// A word or token made safe to print inside a one-line message: quoted, control and
// non-UTF-8 bytes escaped as \xNN, cut to at most `max_bytes` bytes of input.
std::string quote(std::string_view text, std::size_t max_bytes = 64);

// Flattens a message to one line (newlines and tabs become spaces).
std::string one_line(std::string_view text);

}  // namespace simkit
