// Progress bars on standard error for long work, drawn only when stderr is a terminal
// and --quiet is not given. Safe to advance from several threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace simkit {

// Global switch set once by the command line (--quiet, or stderr not a terminal).
void set_progress_enabled(bool enabled) noexcept;
bool progress_enabled() noexcept;

class Progress {
 public:
  // `total` in `unit`s ("B" for bytes prints sizes); 0 = unknown total (a counter).
  Progress(std::string label, std::uint64_t total, std::string unit = "");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::uint64_t amount) noexcept;
  void set(std::uint64_t done) noexcept;
  // Draws the final state and ends the line (called by the destructor too).
  void finish() noexcept;

 private:
  void maybe_draw(bool force) noexcept;
  std::string label_;
  std::string unit_;
  std::uint64_t total_;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::int64_t> next_draw_ns_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex draw_mutex_;
  bool enabled_;
  bool finished_ = false;
};

}  // namespace simkit
