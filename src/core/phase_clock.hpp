// The wall time of a job's phases, printed to standard error when SIMKIT_ENGINE_STATS is
// set (the benchmarks' breakdowns); silent otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace simkit {

class PhaseClock {
 public:
  // `job` (a literal), followed by `index` where one is given (a GPU's number): named
  // without building a string, as a clock is made every batch.
  explicit PhaseClock(const char* job, int index = -1)
      : job_(job), index_(index), on_(std::getenv("SIMKIT_ENGINE_STATS") != nullptr) {}

  bool on() const { return on_; }

  // "JOB[ INDEX]: PHASE in X ms": the time since the last mark (or since the clock was made).
  void mark(const char* phase) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    if (index_ >= 0)
      std::fprintf(stderr, "%s %d: %s in %.3f ms\n", job_, index_, phase, ms);
    else
      std::fprintf(stderr, "%s: %s in %.3f ms\n", job_, phase, ms);
    last_ = now;
  }

 private:
  const char* job_;
  int index_;
  bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace simkit
