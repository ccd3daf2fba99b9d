#include "simkit/threads.hpp"

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

}  // namespace simkit
