#include "simkit/threads.hpp"

#include <sched.h>
#include <unistd.h>

#include <exception>
#include <thread>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>

namespace simkit {

struct ThreadLimit::Impl {
  std::unique_ptr<tbb::global_control> control;
};

ThreadLimit::ThreadLimit(std::size_t threads) : impl_(std::make_unique<Impl>()) {
  if (threads > 0)
    impl_->control = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, threads);
}

ThreadLimit::~ThreadLimit() = default;

std::size_t max_threads() noexcept {
  return tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
}

std::size_t cores_allowed() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cores_online();
  return static_cast<std::size_t>(CPU_COUNT(&set));
}

std::size_t cores_online() noexcept {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<std::size_t>(n) : 1;
}

void run_parts(std::size_t parts, const std::function<void(std::size_t)>& part) {
  if (parts == 1) return part(0);
  std::vector<std::exception_ptr> errors(parts);
  {
    std::vector<std::jthread> threads;
    for (std::size_t p = 0; p < parts; ++p)
      threads.emplace_back([&, p] {
        try {
          part(p);
        } catch (...) {
          errors[p] = std::current_exception();
        }
      });
  }  // joined here
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace simkit
