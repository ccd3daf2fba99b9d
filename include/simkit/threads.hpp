// The thread pool is oneTBB's; this caps how many threads it may use (--threads).
#pragma once

#include <cstddef>
#include <functional>
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

// Calls work(0), ..., work(n - 1) each on a thread of its own (one a GPU, which then work
// at once; n == 1: on this thread), waits for all, and rethrows the first one's error.
void run_each(std::size_t n, const std::function<void(std::size_t)>& work);

}  // namespace simkit
