// Reads lines from a file descriptor in batches: waits for one line, then takes every
// further line already available (up to a limit). A file or pipe that is written all
// at once becomes a few large batches; a co-process or a person typing gets an answer
// for each line as soon as it arrives.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace simkit::cli {

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Fills `lines` (cleared first) with at least one line unless at end of input;
  // returns false at end of input with no line.
  bool next_batch(std::vector<std::string>& lines, std::size_t max_lines);
  // The same under mpirun: rank 0 reads (the launcher gives standard input to it alone)
  // and every rank gets the batch and line number. Every rank calls it.
  bool next_shared_batch(std::vector<std::string>& lines, std::size_t max_lines);
  // Number of the last line returned (1-based).
  std::size_t line_number() const { return line_number_; }

 private:
  bool fill(bool block);
  bool take_line(std::string& line);
  int fd_;
  std::string buffer_;
  std::size_t start_ = 0;
  bool eof_ = false;
  std::size_t line_number_ = 0;
};

}  // namespace simkit::cli
