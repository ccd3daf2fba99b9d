// What every binding shares: NumPy arrays in and out, paths, devices, text, errors.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simkit/device.hpp"
#include "simkit/topk.hpp"

namespace simkit::python {

namespace py = pybind11;

[[noreturn]] void throw_cannot_convert(py::handle value, const py::dtype& to);

// Arrays as the bindings read them: C-ordered, of one dtype (converting when needed).
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using IdArray = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>;
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// Array::ensure(value); ValueError (a UsageError) when NumPy cannot convert it.
template <typename Array>
Array ensure(py::handle value) {
  Array array = Array::ensure(value);
  if (!array) throw_cannot_convert(value, py::dtype::of<typename Array::value_type>());
  return array;
}

// `value` as a NumPy array of real numbers (ints, bools, floats; lists are converted);
// ValueError naming `what` for other dtypes (complex, strings, objects).
py::array real_array(py::handle value, const char* what);

// `value` as a C-ordered float32 array of `ndim` dimensions (and `cols` columns when
// given): float32 C-ordered arrays pass unchanged, other real numbers (float64, ints,
// bools, lists) are converted once. Raises ValueError naming `what` for another dtype
// (complex, strings, objects), another number of dimensions or of columns.
FloatArray float_array(py::handle value, const char* what, int ndim, std::size_t cols = 0);

// A 1-D uint32 array (uint32 C-ordered passes unchanged; other integers are converted
// once after a range check). Raises ValueError naming `what`.
IdArray uint32_array(py::handle value, const std::string& what);

// A path (str or os.PathLike) or a sequence of them as strings; ValueError for an empty
// sequence when `allow_empty` is false.
std::string path_of(py::handle value);
std::vector<std::string> paths_of(py::handle value, const char* what, bool allow_empty = false);

// Text from simkit (UTF-8; other bytes kept as surrogate escapes, as os.fsdecode does).
py::str text(std::string_view bytes);

// "auto", "cpu", "cuda", "cuda:N" as the command line's --device takes them.
Device device_of(const std::string& name);
// The CUDA ordinal for the library's `device` fields: -1 for the CPU.
int device_index(const std::string& name);

// A NumPy array that takes over `values` (no copy), shaped `shape`.
template <typename T, typename Allocator>
py::array_t<T> owned_array(std::vector<T, Allocator>&& values, std::vector<py::ssize_t> shape) {
  auto* heap = new std::vector<T, Allocator>(std::move(values));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T, Allocator>*>(p); });
  return py::array_t<T>(std::move(shape), heap->data(), owner);
}

// A read-only NumPy view of memory that `owner` keeps alive.
template <typename T>
py::array_t<T> read_only_view(const T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  py::array_t<T> view(std::move(shape), data, owner);
  py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return view;
}

// scores [rows, k] float32 and indices [rows, k] int64 (-1 for an empty slot), as
// FAISS's search returns them.
py::tuple topk_arrays(const TopKLists& lists);

// Maps simkit's exceptions: UsageError/InputError to simkit.UsageError/InputError
// (subclasses of ValueError), FileError to OSError with its errno (FileNotFoundError,
// IsADirectoryError, PermissionError, ...), Failure to RuntimeError; the message is the
// command line's error line.
void register_errors(py::module_& m);

void bind_neighbors(py::module_& m);
void bind_topk(py::module_& m);
void bind_dedup(py::module_& m);
void bind_postings(py::module_& m);
void bind_disco(py::module_& m);
void bind_lvq(py::module_& m);
void bind_cca(py::module_& m);

}  // namespace simkit::python
