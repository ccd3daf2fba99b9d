// Streaming canonical correlation analysis over a sliding window (seed 004).
// Tuples arrive one at a time; each is a run of columns split into streams (X and Y,
// or many streams). Over the last `window` tuples the tracker keeps the means and the
// joint covariance up to date from the entering and leaving tuples (rank-b updates),
// and at the reported steps solves the (ridge-regularised) CCA of each stream pair:
// Cholesky factors L1, L2 of S11 + rI and S22 + rI, K = L1^-1 S12 L2^-T, and the
// canonical correlations are K's singular values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simkit/error.hpp"

namespace simkit::cca {

// The streams a tuple is made of, in column order: dims[i] columns for stream i.
struct Layout {
  std::vector<std::size_t> dims;
  std::size_t total() const noexcept;
  std::size_t offset(std::size_t stream) const noexcept;
};

enum class Mode { exact, approx };

// Stream pairs [begin, end) in the pair order (0,1), (0,2), ..., (1,2), ... .
struct PairRange {
  std::size_t begin = 0, end = SIZE_MAX;
};

struct Options {
  std::size_t window = 0;         // n, at least 2
  std::size_t k = 5;              // correlations per pair (at most the smaller side)
  std::size_t every = 1;          // report every this many tuples once the window is full
  double ridge = 0;               // r added to the diagonals of S11 and S22 (0: plain CCA)
  std::size_t recenter = 0;       // exact recomputation of the moments every this many tuples (0: every `window`)
  double skip = -1;               // >= 0: the seed's threshold (see Tracker); < 0: solve at every report
  Mode mode = Mode::exact;
  double epsilon = 0.5, alpha = 1;  // approx: JL accuracy and oversampling
  bool compare_exact = false;     // approx: also solve exactly and report both
  std::uint64_t seed = 1;         // approx: the sampling's random numbers
  bool vectors = false;           // canonical vectors too
  int device = -1;                // CUDA device, -1 = the CPU
  // Exact mode without skip or vectors: report steps solved together (the answers of a
  // push() come as its batches are solved, each batch's while the device solves the next;
  // all before push() returns). 0: the backend's choice (GPU: up to 512 as memory allows;
  // CPU: 4 a thread, solved on all threads); 1: one at a time.
  std::size_t batch = 0;
  // Only these pairs are solved and reported: a worker's share (share_pairs). The rest of
  // the schedule is the whole run's (the report steps, the skips, the solve batches, the
  // approx mode's random draws), so the shares' reports put together are one tracker's.
  PairRange pairs;
};

// One stream pair's answer at a step.
struct PairResult {
  std::size_t a = 0, b = 0;             // the streams (a < b)
  std::vector<double> rho;              // k correlations, largest first
  std::vector<double> a_vectors;        // with Options::vectors: k x dims[a] (row j for rho_j)
  std::vector<double> b_vectors;        // k x dims[b]
  std::size_t a_kept = 0, b_kept = 0;   // approx: the attributes sampled (else all)
  std::vector<double> exact_rho;        // approx with compare_exact: the exact answer
};

struct Report {
  std::uint64_t t = 0;                  // 1-based index of the newest tuple
  bool recomputed = true;               // false: --skip kept the last answer
  std::vector<PairResult> pairs;        // (0,1), (0,2), ..., (1,2), ...
};

struct Stats {
  std::uint64_t tuples = 0, reports = 0, solves = 0, skipped = 0, recenters = 0;
};

using ReportCallback = std::function<void(const Report&)>;

// Thrown by Tracker::push when a window's covariance is singular: at report step `step`,
// solving pair `pair` (its index in the pair order); steps before it were reported. The
// tracker has moved on past the steps handed to the device (its next push may report the
// batch after the refused one first).
class SingularWindow : public InputError {
 public:
  SingularWindow(std::uint64_t step, std::size_t pair, const std::string& reason)
      : InputError(Location{}, reason), step_(step), pair_(pair) {}
  std::uint64_t step() const noexcept { return step_; }
  std::size_t pair() const noexcept { return pair_; }

 private:
  std::uint64_t step_;
  std::size_t pair_;
};

// The sliding-window tracker. Reports come at t = window, window + every, ... .
//   exact   the correlations of each pair from the current window's covariance.
//   skip    (Options::skip = delta >= 0) the seed's threshold: G, the sum since the last
//           solve of |z_new - z_old|^2 / (n - 1) over the arriving tuples (z the whole
//           tuple), is compared with delta x ||S||_F (the joint covariance's Frobenius
//           norm, the root of its squared eigenvalues' sum, at the last solve); a report
//           solves again only when G passed it, else repeats the last answer.
//   approx  the seed's non-uniform column sampling: at each solve, attribute i of a
//           stream is kept with probability min(1, alpha s var_i / sum var), where
//           s = 4 ln(n) / (eps^2/2 - eps^3/3) (Johnson-Lindenstrauss); the pair is
//           solved on the kept attributes only (attributes of zero variance never kept).
// The moments are sums relative to a shift (the window's mean at the last exact
// recomputation), in float64, recomputed exactly from the window every `recenter` tuples.
class Tracker {
 public:
  Tracker(Layout layout, Options options);
  ~Tracker();
  Tracker(const Tracker&) = delete;
  Tracker& operator=(const Tracker&) = delete;
  // Adds `count` tuples (row-major, layout.total() values each, finite) in order; calls
  // on_report for each reported step among them. Throws InputError when a window's
  // covariance is singular (use a ridge).
  void push(const double* tuples, std::size_t count, const ReportCallback& on_report);
  const Stats& stats() const noexcept;
  const Layout& layout() const noexcept;
  const Options& options() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// --- several workers: GPUs of one process, ranks under mpirun (simkit/cluster.hpp) ---

// Worker `part` of `parts`'s pairs: contiguous in the pair order, balanced by the cost of
// solving them ((dims[a] + dims[b])^3 a pair). Some are empty when pairs are fewer than parts.
PairRange share_pairs(const Layout& layout, std::size_t part, std::size_t parts);

// The reports that trackers of the same tuples (each its share of the pairs) gave for
// one stretch of tuples, and the singular window that stopped one, if any.
struct Reports {
  std::vector<Report> reports;
  std::optional<SingularWindow> singular;
};
// Shares in pair order put together as one tracker's: each step's pairs, share after
// share, up to the first singular window one tracker would have met (by step, then pair).
Reports merge_reports(std::vector<Reports> shares);
// Every rank's merged reports (ranks in pair order) put together on rank 0; the other ranks
// get no reports. The singular window, if any, comes back on every rank, so that all
// stop with the same error. Every rank calls it; alone it returns `mine`.
Reports gather_reports(Reports mine);

// --- tuple input -------------------------------------------------------------------

// Columns picked out of a text line: "0-255", "3,5,9-12" (0-based, inclusive ranges).
// Throws UsageError on anything else.
std::vector<std::size_t> parse_columns(const std::string& text);

// A source of tuples. next() fills `out` (cleared first) with up to max_rows tuples,
// columns() values each, and returns how many (0 at the end). Throws InputError naming
// the file and line (text) or byte (binary) for bad input.
class TupleReader {
 public:
  virtual ~TupleReader() = default;
  virtual std::size_t columns() const = 0;
  virtual std::size_t next(std::vector<double>& out, std::size_t max_rows) = 0;
  // True when tuples arrive as they are written (a pipe or a terminal): callers then
  // take one at a time and answer each at once.
  virtual bool live() const { return false; }
};

// Text: one tuple per line, fields separated by commas, or else by tabs or spaces.
// An empty line is a missing tuple (all zero, as in the seed); a line whose field count
// differs from the first tuple's, or a field that is not a finite number, is refused
// with its line number. The stream is read as it arrives; `name` is used in messages.
std::unique_ptr<TupleReader> text_reader(std::FILE* stream, std::string name);
// .sks binary streams (docs/formats.md): header, blocks of float32 rows each with an
// XXH3 checksum, an end block. Damage and truncation are refused with the byte offset.
std::unique_ptr<TupleReader> binary_reader(std::FILE* stream, std::string name);
// Opens `path` ("-" = standard input) as text or .sks (by its first bytes).
std::unique_ptr<TupleReader> open_reader(const std::string& path);
// Tuples side by side: row t of the result is row t of each reader, concatenated. The
// readers must end together (else InputError naming the shorter one).
std::unique_ptr<TupleReader> zip_readers(std::vector<std::unique_ptr<TupleReader>> readers,
                                         std::vector<std::string> names);

// Writes .sks: call add() for rows (columns values each), then finish().
class BinaryWriter {
 public:
  BinaryWriter(std::FILE* out, std::size_t columns);
  void add(const double* rows, std::size_t count);
  void finish();

 private:
  void flush_block();
  std::FILE* out_;
  std::size_t columns_;
  std::vector<float> pending_;
};

}  // namespace simkit::cca
