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

// Cores this process may run on (its CPU affinity: an MPI launcher's binding narrows it)
// and cores the machine has online.
std::size_t cores_allowed() noexcept;
std::size_t cores_online() noexcept;

// Runs part(0) .. part(parts - 1) at once, a thread each (the GPUs of a process, each
// driven by its own thread), and waits for all; then rethrows the first part's exception,
// if any. A single part runs on the calling thread.
void run_parts(std::size_t parts, const std::function<void(std::size_t)>& part);

}  // namespace simkit
