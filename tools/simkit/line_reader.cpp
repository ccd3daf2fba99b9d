#include "line_reader.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "simkit/cluster.hpp"
#include "simkit/error.hpp"

namespace simkit::cli {

bool LineReader::fill(bool block) {
  if (eof_) return false;
  if (!block) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
  }
  if (start_ > 0 && start_ * 2 > buffer_.size()) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd_, chunk, sizeof chunk);
    if (got > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(got));
      return true;
    }
    if (got == 0) {
      eof_ = true;
      return false;
    }
    if (errno != EINTR) throw Failure(std::string("standard input: ") + std::strerror(errno));
  }
}

bool LineReader::take_line(std::string& line) {
  const std::size_t nl = buffer_.find('\n', start_);
  if (nl == std::string::npos) {
    if (!eof_ || start_ == buffer_.size()) return false;
    line.assign(buffer_, start_, std::string::npos);  // last line without a newline
    start_ = buffer_.size();
  } else {
    line.assign(buffer_, start_, nl - start_);
    start_ = nl + 1;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_number_;
  return true;
}

bool LineReader::next_batch(std::vector<std::string>& lines, std::size_t max_lines) {
  lines.clear();
  std::string line;
  while (lines.empty()) {
    if (take_line(line)) {
      lines.push_back(line);
      break;
    }
    if (eof_) return false;
    fill(true);
  }
  while (lines.size() < max_lines) {
    if (take_line(line)) {
      lines.push_back(line);
      continue;
    }
    if (eof_ || !fill(false)) break;
  }
  return true;
}

bool LineReader::next_shared_batch(std::vector<std::string>& lines, std::size_t max_lines) {
  if (cluster::size() == 1) return next_batch(lines, max_lines);
  // Rank 0's batch as "more\nline number\nline\nline...": lines hold no newline.
  std::string packed;
  if (cluster::root()) {
    const bool more = next_batch(lines, max_lines);
    packed = (more ? "1\n" : "0\n") + std::to_string(line_number_) + "\n";
    for (const std::string& line : lines) packed += line + "\n";
  }
  packed = cluster::broadcast(std::move(packed));
  lines.clear();
  std::size_t at = 0;
  const auto next_line = [&] {
    const std::size_t end = packed.find('\n', at);
    std::string line = packed.substr(at, end - at);
    at = end + 1;
    return line;
  };
  const bool more = next_line() == "1";
  line_number_ = std::stoull(next_line());
  while (at < packed.size()) lines.push_back(next_line());
  return more;
}

}  // namespace simkit::cli
