#include "simkit/threads.hpp"

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

void run_each(std::size_t n, const std::function<void(std::size_t)>& work) {
  if (n == 1) return work(0);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(n);
  for (std::size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace simkit
