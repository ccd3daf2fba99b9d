// simkit.topk: each row's k best rows of another matrix through the pairwise engine
// (simkit/dense_topk.hpp).
#include "convert.hpp"
#include "simkit/dense_topk.hpp"
#include "simkit/error.hpp"

#include <fmt/format.h>

namespace simkit::python {

namespace {

py::tuple topk(py::handle a, py::handle b, std::size_t k, const std::string& metric, const std::string& device) {
  DenseTopKOptions options;
  options.k = k;
  options.metric = parse_metric(metric);
  options.device = device_index(device);
  const FloatArray rows_a = float_array(a, "A", 2);
  const FloatArray rows_b = float_array(b, "B", 2, static_cast<std::size_t>(rows_a.shape(1)));
  const auto m = static_cast<std::size_t>(rows_a.shape(0)), n = static_cast<std::size_t>(rows_b.shape(0));
  const auto dim = static_cast<std::size_t>(rows_a.shape(1));
  TopKLists lists;
  {
    py::gil_scoped_release release;
    lists = m == 0 ? TopKLists(0, k) : dense_top_k(rows_a.data(), m, rows_b.data(), n, dim, options);
  }
  return topk_arrays(lists);
}

}  // namespace

void bind_topk(py::module_& m) {
  m.def("topk", &topk, py::arg("A"), py::arg("B"), py::arg("k") = 10, py::arg("metric") = "cosine",
        py::arg("device") = "auto",
        R"doc(For each row of A, the k rows of B that score best, through simkit's pairwise engine
(blocks scored by OpenBLAS on all cores, or by cuBLAS on a GPU, in fp32):
(scores float32 [len(A), k], indices int64 [len(A), k]), best first, ties by lower index,
-1 in slots past len(B).

metric: "cosine" (highest first; 0 for a zero row), "dot" (highest first) or "l2"
(squared Euclidean distances, smallest first, as FAISS's IndexFlatL2; +inf past len(B)).
A and B are [rows, dim] arrays; float32 C order is used without a copy, other real dtypes
are converted once. device: auto, cpu, cuda or cuda:N.)doc");
}

}  // namespace simkit::python
