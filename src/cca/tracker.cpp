// The sliding-window schedule of the CCA tracker: the window (a ring of the last n
// tuples, on the host: the leaving tuple is needed for the update and the skip test),
// the shift the moments are taken against, exact recomputation against drift, the
// report steps, the seed's skip threshold and the approx mode's column sampling. The
// backend (CPU or GPU) does the arithmetic.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "cca/backend.hpp"
#include "simkit/cca.hpp"
#include "simkit/error.hpp"

namespace simkit::cca {

std::size_t Layout::total() const noexcept { return std::accumulate(dims.begin(), dims.end(), std::size_t{0}); }

std::size_t Layout::offset(std::size_t stream) const noexcept {
  return std::accumulate(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(stream), std::size_t{0});
}

namespace {

// Rows handed to the backend at once when no report comes sooner.
constexpr std::size_t kMaxPending = 1024;
// Batched solving: at most this many report steps, and rows behind them, at once.
constexpr std::size_t kMaxBatchSteps = 512;
constexpr std::size_t kMaxBatchRows = 16384;

}  // namespace

struct Tracker::State {
  Layout layout;
  Options options;
  std::size_t d = 0, n = 0, recenter = 0;
  std::unique_ptr<detail::Backend> backend;
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // every pair of the run
  std::vector<std::size_t> k;              // per pair
  std::size_t own_begin = 0, own_end = 0;  // the pairs this tracker solves (Options::pairs)
  std::vector<double> ring;                // n x d, raw tuples
  std::size_t head = 0, filled = 0;        // the oldest row, rows held
  std::vector<double> shift;
  std::vector<double> added, removed;      // pending shifted rows
  std::size_t n_added = 0, n_removed = 0;
  std::uint64_t t = 0, since_recenter = 0;
  double change = 0, threshold = 0;        // skip: G and delta ||S||_F
  bool have_last = false;
  Report last;
  std::mt19937_64 rng;
  Stats stats;
  // Batched solving (exact mode): the queued report steps, and where their rows end.
  std::size_t batch_steps = 0;             // 0: one step at a time
  std::vector<std::uint64_t> queued_t;
  std::vector<std::size_t> queued_added, queued_removed;
  std::vector<std::uint64_t> started_t;    // the steps of the batch on the device, not yet reported
  bool failed = false;                     // a batch could not be started: no answers can be trusted

  void flush() {
    if (n_added + n_removed == 0) return;
    backend->update(added.data(), n_added, removed.data(), n_removed);
    added.clear();
    removed.clear();
    n_added = n_removed = 0;
  }

  // Moments recomputed exactly from the window, against its own mean.
  void recompute() {
    added.clear();
    removed.clear();
    n_added = n_removed = 0;
    std::fill(shift.begin(), shift.end(), 0.0);
    for (std::size_t r = 0; r < filled; ++r)
      for (std::size_t c = 0; c < d; ++c) shift[c] += ring[r * d + c];
    for (double& v : shift) v /= static_cast<double>(filled);
    std::vector<double> rows(filled * d);
    for (std::size_t r = 0; r < filled; ++r)
      for (std::size_t c = 0; c < d; ++c) rows[r * d + c] = ring[r * d + c] - shift[c];
    backend->reset(rows.data(), filled);
    since_recenter = 0;
    ++stats.recenters;
  }

  void add_tuple(const double* z, const ReportCallback& on_report) {
    double* slot = ring.data() + (filled == n ? head : filled) * d;
    const double* centre = shift.data();
    // (Written through pointers: the host's share of a batched step is this loop.)
    if (filled == n) {
      removed.resize((n_removed + 1) * d);
      double* out = removed.data() + n_removed * d;
      double moved = 0;
      for (std::size_t c = 0; c < d; ++c) {
        const double delta = z[c] - slot[c];
        moved += delta * delta;
        out[c] = slot[c] - centre[c];
      }
      ++n_removed;
      change += moved / static_cast<double>(n - 1);
    }
    added.resize((n_added + 1) * d);
    double* out = added.data() + n_added * d;
    for (std::size_t c = 0; c < d; ++c) out[c] = z[c] - centre[c];
    ++n_added;
    std::copy(z, z + d, slot);
    if (filled == n) {
      head = (head + 1) % n;
    } else {
      ++filled;
    }
    ++t;
    ++since_recenter;
    ++stats.tuples;
    if (filled == n && since_recenter >= recenter) {
      solve_queued(on_report);  // the queued steps stand on the moments being replaced
      recompute();
    } else if (filled == 1) {
      // The first tuple sets the shift (a stand-in for the mean until the first recompute).
      std::copy(z, z + d, shift.begin());
      added.assign(d, 0.0);
    } else if (n_added >= kMaxPending && queued_t.empty()) {
      flush();
    }
  }

  std::vector<std::size_t> columns(std::size_t stream) const {
    std::vector<std::size_t> cols(layout.dims[stream]);
    std::iota(cols.begin(), cols.end(), layout.offset(stream));
    return cols;
  }

  // The approx mode's sample of a stream's columns (at least `keep_at_least` of them).
  std::vector<std::size_t> sample(std::size_t stream, const std::vector<double>& variance, std::size_t keep_at_least) {
    const std::vector<std::size_t> all = columns(stream);
    const double e = options.epsilon;
    const double target = 4 * std::log(static_cast<double>(n)) / (e * e / 2 - e * e * e / 3);
    double total = 0;
    for (std::size_t c : all) total += variance[c];
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<char> kept(all.size(), 0);
    std::size_t count = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const double u = uniform(rng);  // drawn for every column, so the sequence does not depend on the data
      const double p = total > 0 ? std::min(1.0, options.alpha * target * variance[all[i]] / total) : 0.0;
      if (u < p) {
        kept[i] = 1;
        ++count;
      }
    }
    // Too few: the largest variances not yet kept (lower column first on ties).
    if (count < keep_at_least) {
      std::vector<std::size_t> order(all.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t x, std::size_t y) { return variance[all[x]] > variance[all[y]]; });
      for (std::size_t i = 0; i < order.size() && count < keep_at_least; ++i)
        if (!kept[order[i]]) {
          kept[order[i]] = 1;
          ++count;
        }
    }
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (kept[i]) out.push_back(all[i]);
    return out;
  }

  [[noreturn]] void throw_singular(std::size_t index, bool first, std::uint64_t at) const {
    const auto [a, b] = pairs[index];
    const std::size_t stream = first ? a : b;
    const std::string which = pairs.size() == 1 && layout.dims.size() == 2 ? (stream == 0 ? "X" : "Y")
                                                                           : fmt::format("stream {}", stream + 1);
    throw SingularWindow(at, index,
                         fmt::format("the window ending at tuple {} has a singular covariance of {} "
                                     "(a constant attribute, or fewer tuples than attributes): use "
                                     "--ridge (ridge now {:g})",
                                     at, which, options.ridge));
  }

  PairResult solve_pair(std::size_t index, const std::vector<std::size_t>& a_cols, const std::vector<std::size_t>& b_cols) {
    try {
      return backend->solve(a_cols, b_cols, k[index], options.ridge, options.vectors);
    } catch (const detail::Singular& s) {
      throw_singular(index, s.first, t);
    }
  }

  // A report step of the batched path: solved with the others in the queue.
  void queue(const ReportCallback& on_report) {
    queued_t.push_back(t);
    queued_added.push_back(n_added);
    queued_removed.push_back(n_removed);
    if (queued_t.size() >= batch_steps || n_added + n_removed >= kMaxBatchRows) solve_queued(on_report);
  }

  // Starts solving the queued steps together and moves the moments to the last of them;
  // then reports the batch started before, whose answers the device has had all the while
  // the host gathered this batch's rows.
  void solve_queued(const ReportCallback& on_report) {
    if (queued_t.empty()) return;
    if (queued_t.size() == 1 && queued_added.back() == n_added && queued_removed.back() == n_removed) {
      // A lone step with no rows behind it (a live stream): the one-step path answers it
      // with the least delay, after the batch before it.
      report_started(on_report);
      queued_t.clear();
      queued_added.clear();
      queued_removed.clear();
      report(on_report);
      return;
    }
    std::vector<std::uint64_t> steps = std::move(queued_t);
    const std::vector<std::size_t> added_end = std::move(queued_added), removed_end = std::move(queued_removed);
    queued_t.clear();
    queued_added.clear();
    queued_removed.clear();
    try {
      backend->begin_steps(added.data(), added_end, removed.data(), removed_end, n);
      for (std::size_t i = own_begin; i < own_end; ++i) {
        const auto [a, b] = pairs[i];
        backend->solve_steps(columns(a), columns(b), k[i], options.ridge);
      }
      backend->end_steps();
    } catch (...) {
      // (Out of memory, a lost device: some pairs' answers may be queued, others not, so
      // the answers would no longer line up with their steps.)
      failed = true;
      throw;
    }
    // The moments move past the started steps; rows after the last stay pending.
    const std::size_t na = added_end.back(), nr = removed_end.back();
    added.erase(added.begin(), added.begin() + static_cast<std::ptrdiff_t>(na * d));
    removed.erase(removed.begin(), removed.begin() + static_cast<std::ptrdiff_t>(nr * d));
    n_added -= na;
    n_removed -= nr;
    report_steps(std::exchange(started_t, std::move(steps)), on_report);
  }

  // Reports the started batch, if any (waiting for its answers).
  void report_started(const ReportCallback& on_report) { report_steps(std::exchange(started_t, {}), on_report); }

  // Reports a started batch's steps in order; a singular window throws at its step,
  // after the steps before it.
  void report_steps(const std::vector<std::uint64_t>& steps, const ReportCallback& on_report) {
    if (steps.empty()) return;
    std::vector<std::vector<double>> rho(pairs.size());
    std::vector<std::vector<int>> singular(pairs.size());
    for (std::size_t i = own_begin; i < own_end; ++i) rho[i] = backend->collect_steps(singular[i]);
    for (std::size_t j = 0; j < steps.size(); ++j) {
      Report answer;
      answer.t = steps[j];
      for (std::size_t i = own_begin; i < own_end; ++i) {
        if (singular[i][j] != 0) throw_singular(i, singular[i][j] == 1, steps[j]);
        PairResult result;
        std::tie(result.a, result.b) = pairs[i];
        result.a_kept = layout.dims[result.a];
        result.b_kept = layout.dims[result.b];
        result.rho.assign(rho[i].begin() + static_cast<std::ptrdiff_t>(j * k[i]),
                          rho[i].begin() + static_cast<std::ptrdiff_t>((j + 1) * k[i]));
        answer.pairs.push_back(std::move(result));
      }
      ++stats.solves;
      ++stats.reports;
      on_report(answer);
    }
  }

  // Scatters a vector over the kept columns back to the stream's full width.
  std::vector<double> expand(const std::vector<double>& vectors, const std::vector<std::size_t>& cols,
                             std::size_t stream, std::size_t count) const {
    const std::size_t width = layout.dims[stream], base = layout.offset(stream);
    std::vector<double> out(count * width, 0.0);
    for (std::size_t j = 0; j < count; ++j)
      for (std::size_t i = 0; i < cols.size(); ++i) out[j * width + cols[i] - base] = vectors[j * cols.size() + i];
    return out;
  }

  Report solve() {
    flush();
    backend->covariance(n);
    Report report;
    report.t = t;
    std::vector<double> variance;
    if (options.mode == Mode::approx) variance = backend->diagonal();
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const auto [a, b] = pairs[i];
      std::vector<std::size_t> a_cols = columns(a), b_cols = columns(b);
      PairResult result;
      if (options.mode == Mode::approx) {
        // Every pair's sample is drawn, so that the random numbers of the pairs solved here
        // are those one tracker of every pair would draw for them.
        const std::vector<std::size_t> a_kept = sample(a, variance, k[i]), b_kept = sample(b, variance, k[i]);
        if (i < own_begin || i >= own_end) continue;
        result = solve_pair(i, a_kept, b_kept);
        if (options.vectors) {
          result.a_vectors = expand(result.a_vectors, a_kept, a, k[i]);
          result.b_vectors = expand(result.b_vectors, b_kept, b, k[i]);
        }
        if (options.compare_exact) {
          result.exact_rho = solve_pair(i, a_cols, b_cols).rho;
        }
      } else {
        if (i < own_begin || i >= own_end) continue;
        result = solve_pair(i, a_cols, b_cols);
      }
      result.a = a;
      result.b = b;
      detail::canonical_signs(result, layout.dims[a], layout.dims[b]);
      report.pairs.push_back(std::move(result));
    }
    ++stats.solves;
    return report;
  }

  void report(const ReportCallback& on_report) {
    ++stats.reports;
    if (options.skip >= 0 && have_last && change <= threshold) {
      last.t = t;
      last.recomputed = false;
      ++stats.skipped;
      on_report(last);
      return;
    }
    last = solve();
    have_last = true;
    if (options.skip >= 0) {
      threshold = options.skip * backend->frobenius();
      change = 0;
    }
    on_report(last);
  }
};

Tracker::Tracker(Layout layout, Options options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  if (layout.dims.size() < 2) throw UsageError("CCA needs at least two streams");
  for (std::size_t dims : layout.dims)
    if (dims == 0) throw UsageError("a stream without attributes");
  if (options.window < 2) throw UsageError("--window must be at least 2");
  if (options.k == 0) throw UsageError("--k must be at least 1");
  if (options.every == 0) throw UsageError("--every must be at least 1");
  if (!(options.ridge >= 0) || !std::isfinite(options.ridge)) throw UsageError("--ridge must be a number >= 0");
  if (options.mode == Mode::approx && !(options.epsilon > 0 && options.epsilon < 1))
    throw UsageError("--epsilon must lie in (0, 1)");
  if (options.mode == Mode::approx && !(options.alpha > 0)) throw UsageError("--alpha must be positive");
  s.layout = std::move(layout);
  s.options = options;
  s.d = s.layout.total();
  s.n = options.window;
  s.recenter = options.recenter == 0 ? 16 * s.n : options.recenter;
  s.backend = options.device >= 0 ? detail::gpu_backend(s.d, options.device) : detail::cpu_backend(s.d);
  for (std::size_t a = 0; a < s.layout.dims.size(); ++a)
    for (std::size_t b = a + 1; b < s.layout.dims.size(); ++b) {
      s.pairs.emplace_back(a, b);
      s.k.push_back(std::min({options.k, s.layout.dims[a], s.layout.dims[b]}));
    }
  s.own_end = std::min(options.pairs.end, s.pairs.size());
  s.own_begin = std::min(options.pairs.begin, s.own_end);
  s.ring.assign(s.n * s.d, 0.0);
  s.shift.assign(s.d, 0.0);
  s.rng.seed(options.seed);
  // The batched path: exact correlations alone, as many steps as the backend takes.
  if (options.mode == Mode::exact && options.skip < 0 && !options.vectors && options.batch != 1) {
    std::size_t steps = options.batch == 0 ? kMaxBatchSteps : options.batch;
    for (const auto& [a, b] : s.pairs) {
      const std::size_t pa = s.layout.dims[a], pb = s.layout.dims[b];
      steps = std::min(steps, s.backend->batch_capacity(pa + pb, std::min(pa, pb), 2 * options.every));
    }
    if (steps >= 2) s.batch_steps = steps;
  }
}

Tracker::~Tracker() = default;

void Tracker::push(const double* tuples, std::size_t count, const ReportCallback& on_report) {
  State& s = *state_;
  if (s.failed) throw Failure("the CCA tracker failed in an earlier batch and cannot go on");
  s.backend->bind();
  for (std::size_t i = 0; i < count; ++i) {
    s.add_tuple(tuples + i * s.d, on_report);
    if (s.filled == s.n && (s.t - s.n) % s.options.every == 0) {
      if (s.batch_steps > 0) {
        s.queue(on_report);
      } else {
        s.report(on_report);
      }
    }
  }
  s.solve_queued(on_report);
  s.report_started(on_report);
}

const Stats& Tracker::stats() const noexcept { return state_->stats; }
const Layout& Tracker::layout() const noexcept { return state_->layout; }
const Options& Tracker::options() const noexcept { return state_->options; }

}  // namespace simkit::cca
