// Internal: SIMKIT_POSTINGS_PHASES=1 prints each batch's phases (wall ms) on stderr, to
// see where a batch's host time goes (bench/results/postings.md).
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace simkit::postings::detail {

struct Phases {
  const char* what;
  bool on = std::getenv("SIMKIT_POSTINGS_PHASES") != nullptr;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::string line;

  explicit Phases(const char* batch) : what(batch) {}
  void mark(const char* phase) {
    if (!on) return;
    const auto now = std::chrono::steady_clock::now();
    line += std::string(" ") + phase + " " +
            std::to_string(std::chrono::duration<double, std::milli>(now - last).count()).substr(0, 6);
    last = now;
  }
  ~Phases() {
    if (on) std::fprintf(stderr, "simkit: phases: %s (ms):%s\n", what, line.c_str());
  }
};

}  // namespace simkit::postings::detail
