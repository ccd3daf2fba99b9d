// _simkit: the compiled part of the Python package simkit (python/simkit/__init__.py
// re-exports it). One file a capability; conversions and errors in convert.cpp.
#include <memory>

#include "convert.hpp"
#include "simkit/device.hpp"
#include "simkit/threads.hpp"

namespace simkit::python {
namespace {

std::unique_ptr<ThreadLimit> g_thread_limit;  // set_num_threads

}  // namespace
}  // namespace simkit::python

PYBIND11_MODULE(_simkit, m) {
  using namespace simkit;
  using namespace simkit::python;
  m.doc() = "simkit's compiled core; use the package simkit.";
  m.attr("__version__") = SIMKIT_VERSION;
  register_errors(m);
  m.def("cuda_built", &cuda_built, "True when this simkit was built with CUDA.");
  m.def("cuda_device_count", &cuda_device_count, "The number of usable CUDA devices (0 without CUDA or a GPU).");
  m.def(
      "resolve_device",
      [](const std::string& name) {
        const Device d = device_of(name);
        return d.cuda ? "cuda:" + std::to_string(d.index) : std::string("cpu");
      },
      py::arg("device") = "auto", "Where a call with this device string runs: 'cpu' or 'cuda:N'.");
  m.def(
      "set_num_threads",
      [](std::size_t threads) {
        g_thread_limit.reset();
        if (threads > 0) g_thread_limit = std::make_unique<ThreadLimit>(threads);
      },
      py::arg("threads"), "Limits simkit's CPU work to this many threads (0: all cores), as --threads does.");
  m.def("get_num_threads", &max_threads, "The threads simkit's CPU work may use now.");
  bind_neighbors(m);
  bind_topk(m);
  bind_dedup(m);
  bind_postings(m);
  bind_disco(m);
  bind_lvq(m);
  bind_cca(m);
  // The thread limit goes before the interpreter tears the module down.
  py::module_::import("atexit").attr("register")(py::cpp_function([] { g_thread_limit.reset(); }));
}
