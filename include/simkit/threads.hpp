// The thread pool is oneTBB's; this caps how many threads it may use (--threads).
#pragma once

#include <cstddef>
#include <memory>

namespace simkit {

// Limits simkit's parallel work to `threads` threads while alive (0 = all cores).
class ThreadLimit {
 public:
  explicit ThreadLimit(std::size_t threads);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Threads parallel work may use now.
std::size_t max_threads() noexcept;

}  // namespace simkit
