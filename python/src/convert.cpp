// Conversions between Python and simkit, and the exceptions' mapping (convert.hpp).
#include "convert.hpp"

#include <fmt/format.h>

#include "simkit/error.hpp"

namespace simkit::python {

namespace {

std::string shape_text(const py::array& array) {
  std::string out = "(";
  for (py::ssize_t d = 0; d < array.ndim(); ++d) out += fmt::format("{}{}", d ? ", " : "", array.shape(d));
  return out + (array.ndim() == 1 ? ",)" : ")");
}

py::array as_array(py::handle value, const std::string& what) {
  py::array array = py::array::ensure(value);
  if (!array) throw UsageError(fmt::format("{}: expected an array, got {}", what, std::string(py::str(value.get_type().attr("__name__")))));
  return array;
}

}  // namespace

void throw_cannot_convert(py::handle value, const py::dtype& to) {
  throw UsageError(fmt::format("cannot convert {} to an array of {}", std::string(py::str(value.get_type().attr("__name__"))),
                               std::string(py::str(py::handle(to)))));
}

py::array real_array(py::handle value, const char* what) {
  py::array array = as_array(value, what);
  const char kind = array.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    throw UsageError(fmt::format("{}: expected real numbers, got dtype {}", what, std::string(py::str(array.dtype()))));
  return array;
}

FloatArray float_array(py::handle value, const char* what, int ndim, std::size_t cols) {
  const py::array array = real_array(value, what);
  if (array.ndim() != ndim)
    throw UsageError(fmt::format("{}: expected a {}-D array, got shape {}", what, ndim, shape_text(array)));
  if (cols != 0 && static_cast<std::size_t>(array.shape(ndim - 1)) != cols)
    throw UsageError(fmt::format("{}: expected {} columns, got shape {}", what, cols, shape_text(array)));
  return ensure<FloatArray>(array);  // the same object when already float32 and C-ordered
}

IdArray uint32_array(py::handle value, const std::string& what) {
  const py::array array = as_array(value, what);
  const char kind = array.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw UsageError(fmt::format("{}: expected integer ids (uint32 best), got dtype {}", what,
                                 std::string(py::str(array.dtype()))));
  if (array.ndim() != 1) throw UsageError(fmt::format("{}: expected a 1-D array, got shape {}", what, shape_text(array)));
  if (array.size() > 0 && !py::isinstance<IdArray>(array)) {
    const bool negative = kind == 'i' && array.attr("min")().cast<long long>() < 0;
    if (negative || array.attr("max")().cast<unsigned long long>() > 0xffffffffull)
      throw UsageError(fmt::format("{}: ids must be in 0..4294967295", what));
  }
  return ensure<IdArray>(array);
}

std::string path_of(py::handle value) {
  const py::bytes encoded = py::module_::import("os").attr("fsencode")(value);
  return encoded;
}

std::vector<std::string> paths_of(py::handle value, const char* what, bool allow_empty) {
  std::vector<std::string> out;
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) || py::hasattr(value, "__fspath__")) {
    out.push_back(path_of(value));
  } else {
    if (!py::isinstance<py::iterable>(value))
      throw UsageError(fmt::format("{}: expected a path or a list of paths", what));
    for (const py::handle item : value) out.push_back(path_of(item));
  }
  if (out.empty() && !allow_empty) throw UsageError(fmt::format("{}: the list is empty", what));
  return out;
}

py::str text(std::string_view bytes) {
  PyObject* s = PyUnicode_DecodeUTF8(bytes.data(), static_cast<py::ssize_t>(bytes.size()), "surrogateescape");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

Device device_of(const std::string& name) { return resolve_device(parse_device(name)); }

int device_index(const std::string& name) {
  const Device device = device_of(name);
  return device.cuda ? device.index : -1;
}

py::tuple topk_arrays(const TopKLists& lists) {
  const auto rows = static_cast<py::ssize_t>(lists.rows), k = static_cast<py::ssize_t>(lists.k);
  py::array_t<float> scores({rows, k});
  py::array_t<std::int64_t> indices({rows, k});
  float* s = scores.mutable_data();
  std::int64_t* i = indices.mutable_data();
  for (std::size_t n = 0; n < lists.rows * lists.k; ++n) {
    s[n] = lists.scores[n];
    i[n] = lists.indices[n] == kNoIndex ? -1 : static_cast<std::int64_t>(lists.indices[n]);
  }
  return py::make_tuple(scores, indices);
}

void register_errors(py::module_& m) {
  static py::exception<UsageError> usage(m, "UsageError", PyExc_ValueError);
  static py::exception<InputError> input(m, "InputError", PyExc_ValueError);
  usage.doc() = "A call's arguments are wrong (unknown option, bad value): simkit's usage error, a ValueError.";
  input.doc() = "An input is malformed or names something missing: simkit's input error, a ValueError.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const FileError& e) {
      // OSError(errno, message) comes back as its subclass: FileNotFoundError, ...
      PyObject* error = PyObject_CallFunction(PyExc_OSError, "is", e.error_number(), e.what());
      if (error == nullptr) return;
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error)), error);
      Py_DECREF(error);
    } catch (const UsageError& e) {
      usage(e.what());
    } catch (const InputError& e) {
      input(e.what());
    } catch (const Failure& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace simkit::python
