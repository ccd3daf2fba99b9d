// The wall time of a job's phases, printed to standard error when SIMKIT_ENGINE_STATS is
// set (the benchmarks' breakdowns); silent otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace simkit {

class PhaseClock {
 public:
  explicit PhaseClock(std::string job) : job_(std::move(job)), on_(std::getenv("SIMKIT_ENGINE_STATS") != nullptr) {}

  bool on() const { return on_; }

  // "JOB: PHASE in X ms": the time since the last mark (or since the clock was made).
  void mark(const char* phase) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "%s: %s in %.3f ms\n", job_.c_str(), phase,
                 std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  std::string job_;
  bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace simkit
