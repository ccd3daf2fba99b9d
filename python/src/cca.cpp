// simkit.SlidingCCA: canonical correlations of two streams over a sliding window, tuple
// by tuple (simkit/cca.hpp).
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "convert.hpp"
#include "simkit/cca.hpp"
#include "simkit/error.hpp"

namespace simkit::python {

namespace {

class SlidingCCA {
 public:
  SlidingCCA(std::size_t p, std::size_t q, std::size_t window, std::size_t k, double ridge, std::size_t every,
             const std::string& device)
      : p_(p), q_(q), k_(std::min({k, p, q})) {  // the tracker keeps at most the smaller side's
    cca::Options options;
    options.window = window;
    options.k = k;
    options.ridge = ridge;
    options.every = every;
    options.device = device_index(device);
    tracker_ = std::make_unique<cca::Tracker>(cca::Layout{{p, q}}, options);
  }

  // One tuple (x of p values, y of q): its window's correlations, or None before a report.
  // Arrays of tuples ([n, p], [n, q]): the correlations of every report among them, [m, k].
  py::object update(py::handle x, py::handle y) {
    const DoubleArray xs = values(x, "x", p_), ys = values(y, "y", q_);
    if (xs.ndim() != ys.ndim()) throw UsageError("x and y: give one tuple (1-D) or arrays of tuples (2-D) for both");
    const bool one = xs.ndim() == 1;
    const std::size_t n = one ? 1 : static_cast<std::size_t>(xs.shape(0));
    if (!one && static_cast<std::size_t>(ys.shape(0)) != n)
      throw UsageError(fmt::format("x has {} tuples, y {}", n, ys.shape(0)));
    // Tuples are x then y, side by side.
    std::vector<double> tuples(n * (p_ + q_));
    for (std::size_t t = 0; t < n; ++t) {
      std::copy_n(xs.data() + t * p_, p_, tuples.begin() + static_cast<std::ptrdiff_t>(t * (p_ + q_)));
      std::copy_n(ys.data() + t * q_, q_, tuples.begin() + static_cast<std::ptrdiff_t>(t * (p_ + q_) + p_));
    }
    std::vector<double> rho;
    std::size_t reports = 0;
    {
      py::gil_scoped_release release;
      tracker_->push(tuples.data(), n, [&](const cca::Report& report) {
        const std::vector<double>& r = report.pairs.at(0).rho;
        rho.insert(rho.end(), r.begin(), r.end());
        last_.assign(r.begin(), r.end());
        ++reports;
      });
    }
    const auto k = static_cast<py::ssize_t>(k_);
    if (one) return reports == 0 ? py::object(py::none()) : py::object(owned_array(std::move(rho), {k}));
    return owned_array(std::move(rho), {static_cast<py::ssize_t>(reports), k});
  }

  py::object correlations() const {
    if (last_.empty()) return py::none();
    return py::array_t<double>(static_cast<py::ssize_t>(last_.size()), last_.data());
  }

  std::uint64_t tuples() const { return tracker_->stats().tuples; }

 private:
  // A tuple or rows of tuples as float64 (converted once unless already float64 C order).
  static DoubleArray values(py::handle v, const char* what, std::size_t width) {
    DoubleArray a = ensure<DoubleArray>(real_array(v, what));
    if ((a.ndim() != 1 && a.ndim() != 2) || static_cast<std::size_t>(a.shape(a.ndim() - 1)) != width)
      throw UsageError(fmt::format("{}: expected {} values a tuple (a 1-D array, or [n, {}] for many)", what, width, width));
    return a;
  }

  std::size_t p_, q_, k_;
  std::unique_ptr<cca::Tracker> tracker_;
  std::vector<double> last_;
};

}  // namespace

void bind_cca(py::module_& m) {
  py::class_<SlidingCCA>(m, "SlidingCCA", R"doc(
Canonical correlations of two streams X (p columns) and Y (q columns) over a sliding
window of the last `window` tuples, as `simkit cca` computes them: the window's means
and covariances updated as tuples enter and leave, the k correlations solved exactly in
float64 (with `ridge` added to the diagonals of S11 and S22) every `every` tuples once
the window is full.

    t = simkit.SlidingCCA(p=8, q=8, window=256, k=3, ridge=1e-3)
    rho = t.update(x_rows, y_rows)   # [reports, k]
    t.correlations()                 # the latest window's
)doc")
      .def(py::init<std::size_t, std::size_t, std::size_t, std::size_t, double, std::size_t, const std::string&>(),
           py::arg("p"), py::arg("q"), py::arg("window"), py::arg("k") = 1, py::arg("ridge") = 0.0,
           py::arg("every") = 1, py::arg("device") = "auto")
      .def("update", &SlidingCCA::update, py::arg("x"), py::arg("y"),
           R"doc(Adds one tuple (x: p values, y: q values), giving its window's correlations (k
float64, largest first) or None when no report falls on it; or arrays of tuples ([n, p]
and [n, q]), giving the correlations of every report among them ([m, k]): the rows of
`simkit cca`. A singular window raises simkit.InputError (add a ridge).)doc")
      .def("correlations", &SlidingCCA::correlations,
           "The correlations of the latest report (k float64, largest first), or None before the window is full.")
      .def_property_readonly("tuples", &SlidingCCA::tuples, "The number of tuples added so far.");
}

}  // namespace simkit::python
