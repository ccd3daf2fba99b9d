// Timing helpers of the end-to-end benchmarks: wall clocks and medians.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace simkit::bench {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Wall seconds of `reps` runs of `body` (after one warm-up when warm_up), median.
inline double wall_median(int reps, bool warm_up, const std::function<void()>& body) {
  if (warm_up) body();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double start = now_s();
    body();
    t.push_back(now_s() - start);
  }
  return median(t);
}

}  // namespace simkit::bench
