#include "simkit/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "simkit/device.hpp"

namespace simkit {

namespace {
std::atomic<bool> g_enabled{false};
constexpr std::int64_t kRedrawNs = 100'000'000;  // at most ten frames a second

std::string amount(std::uint64_t value, const std::string& unit) {
  if (unit == "B") return format_byte_size(value);
  if (value >= 10'000'000) return fmt::format("{:.1f}M{}", value / 1e6, unit.empty() ? "" : " " + unit);
  if (value >= 10'000) return fmt::format("{:.1f}k{}", value / 1e3, unit.empty() ? "" : " " + unit);
  return fmt::format("{}{}", value, unit.empty() ? "" : " " + unit);
}
}  // namespace

void set_progress_enabled(bool enabled) noexcept { g_enabled = enabled; }
bool progress_enabled() noexcept { return g_enabled; }

Progress::Progress(std::string label, std::uint64_t total, std::string unit)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      enabled_(g_enabled && ::isatty(STDERR_FILENO)) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::uint64_t amount_done) noexcept {
  done_.fetch_add(amount_done, std::memory_order_relaxed);
  maybe_draw(false);
}

void Progress::set(std::uint64_t done) noexcept {
  done_.store(done, std::memory_order_relaxed);
  maybe_draw(false);
}

void Progress::finish() noexcept {
  if (!enabled_ || finished_) return;
  maybe_draw(true);
  std::lock_guard lock(draw_mutex_);
  finished_ = true;
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void Progress::maybe_draw(bool force) noexcept {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const std::int64_t elapsed_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_).count();
  std::int64_t due = next_draw_ns_.load(std::memory_order_relaxed);
  if (!force && (elapsed_ns < due ||
                 !next_draw_ns_.compare_exchange_strong(due, elapsed_ns + kRedrawNs)))
    return;
  std::unique_lock lock(draw_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  try {
    const std::uint64_t done = done_.load(std::memory_order_relaxed);
    const double seconds = elapsed_ns / 1e9;
    std::string line;
    if (total_ > 0) {
      const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(fraction * kWidth);
      line = fmt::format("\r{} [{}{}] {:5.1f}% {}/{} {:.1f}s", label_, std::string(filled, '='),
                         std::string(kWidth - filled, ' '), 100.0 * fraction, amount(done, unit_),
                         amount(total_, unit_), seconds);
      if (fraction > 0.02 && fraction < 1.0)
        line += fmt::format(" (about {:.0f}s left)", seconds * (1.0 - fraction) / fraction);
    } else {
      line = fmt::format("\r{} {} {:.1f}s", label_, amount(done, unit_), seconds);
    }
    line += "\x1b[K";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  } catch (...) {
    // Drawing is best effort; never let it end the program.
  }
}

}  // namespace simkit
