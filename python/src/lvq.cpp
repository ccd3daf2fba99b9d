// The compiled core of simkit.GLVQ (simkit/_glvq.py): GLVQ training, prediction and
// .skq files over NumPy arrays (simkit/lvq.hpp). The estimator itself is Python.
#include <pybind11/stl.h>

#include <fmt/format.h>

#include "convert.hpp"
#include "simkit/error.hpp"
#include "simkit/lvq.hpp"

namespace simkit::python {

namespace {

// The samples as simkit's data set (copied: the trainer keeps its own rows).
lvq::Dataset dataset(py::handle x, std::size_t dims) {
  const FloatArray rows = float_array(x, "X", 2, dims);
  lvq::Dataset data;
  data.rows = static_cast<std::size_t>(rows.shape(0));
  data.dims = static_cast<std::size_t>(rows.shape(1));
  data.features.assign(rows.data(), rows.data() + rows.size());
  return data;
}

template <typename Enum>
Enum choose(const char* what, const std::string& value, std::initializer_list<std::pair<const char*, Enum>> choices) {
  std::string names;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    names += names.empty() ? name : std::string(", ") + name;
  }
  throw UsageError(fmt::format("{} {}: expected {}", what, quote(value), names));
}

py::dict model_dict(lvq::Model&& model) {
  py::dict out;
  const auto count = static_cast<py::ssize_t>(model.count()), dims = static_cast<py::ssize_t>(model.dims);
  py::list classes;
  for (const std::string& c : model.classes) classes.append(text(c));
  out["classes"] = classes;
  out["per_class"] = model.per_class;
  out["prototypes"] = owned_array(std::move(model.prototypes), {count, dims});
  out["mean"] = model.mean.empty() ? py::object(py::none()) : owned_array(std::move(model.mean), {dims});
  out["scale"] = model.scale.empty() ? py::object(py::none()) : owned_array(std::move(model.scale), {dims});
  return out;
}

lvq::Model model_of(const std::vector<std::string>& classes, std::size_t per_class, py::handle prototypes,
                    py::handle mean, py::handle scale) {
  lvq::Model model;
  model.classes = classes;
  model.per_class = per_class;
  const FloatArray p = float_array(prototypes, "prototypes_", 2);
  if (static_cast<std::size_t>(p.shape(0)) != model.count())
    throw UsageError(fmt::format("prototypes_: {} rows for {} classes x {} prototypes", p.shape(0), classes.size(), per_class));
  model.dims = static_cast<std::size_t>(p.shape(1));
  model.prototypes.assign(p.data(), p.data() + p.size());
  if (!mean.is_none()) {
    const FloatArray m = float_array(mean, "mean_", 1, model.dims), s = float_array(scale, "scale_", 1, model.dims);
    model.mean.assign(m.data(), m.data() + m.size());
    model.scale.assign(s.data(), s.data() + s.size());
  }
  return model;
}

py::dict train(py::handle x, py::handle labels, const std::vector<std::string>& classes, std::size_t per_class,
               std::size_t epochs, std::size_t batch, double learning_rate, const std::string& schedule, double xi,
               const std::string& init, std::uint64_t seed, bool standardize, const std::string& device) {
  lvq::TrainOptions options;
  options.per_class = per_class;
  options.epochs = epochs;
  options.batch = batch;
  options.learning_rate = learning_rate;
  options.schedule = choose<lvq::Schedule>("schedule", schedule, {{"linear", lvq::Schedule::linear}, {"constant", lvq::Schedule::constant}});
  options.xi = xi;
  options.init = choose<lvq::Init>("init", init, {{"auto", lvq::Init::automatic}, {"means", lvq::Init::means}, {"kmeans", lvq::Init::kmeans}});
  options.seed = seed;
  options.standardize = standardize;
  options.device = device_index(device);
  lvq::Dataset data = dataset(x, 0);
  const auto ids = uint32_array(labels, "y");
  if (static_cast<std::size_t>(ids.size()) != data.rows)
    throw UsageError(fmt::format("X has {} rows, y {} labels", data.rows, ids.size()));
  data.labels.assign(ids.data(), ids.data() + ids.size());
  data.classes = classes;
  for (const std::uint32_t l : data.labels)
    if (l >= classes.size()) throw UsageError("y: a label index is out of range");
  std::vector<double> loss, train_error;
  lvq::Model model;
  {
    py::gil_scoped_release release;
    model = lvq::train(data, nullptr, options, [&](const lvq::EpochStats& e) {
      loss.push_back(e.loss);
      train_error.push_back(e.train_error);
    });
  }
  py::dict out = model_dict(std::move(model));
  out["loss"] = loss;
  out["train_error"] = train_error;
  return out;
}

py::array_t<std::uint32_t> predict(const std::vector<std::string>& classes, std::size_t per_class, py::handle prototypes,
                                   py::handle mean, py::handle scale, py::handle x, std::size_t top,
                                   const std::string& device) {
  const lvq::Model model = model_of(classes, per_class, prototypes, mean, scale);
  const lvq::Dataset data = dataset(x, model.dims);
  const int where = device_index(device);
  top = std::min(std::max<std::size_t>(top, 1), model.classes.size());
  std::vector<std::uint32_t> nearest;
  {
    py::gil_scoped_release release;
    nearest = lvq::predict(model, data, top, where);
  }
  return owned_array(std::move(nearest), {static_cast<py::ssize_t>(data.rows), static_cast<py::ssize_t>(top)});
}

}  // namespace

void bind_lvq(py::module_& m) {
  m.def("_lvq_train", &train, py::arg("X"), py::arg("labels"), py::arg("classes"), py::arg("per_class"),
        py::arg("epochs"), py::arg("batch"), py::arg("learning_rate"), py::arg("schedule"), py::arg("xi"),
        py::arg("init"), py::arg("seed"), py::arg("standardize"), py::arg("device"),
        "GLVQ training (simkit.GLVQ.fit): a dict of prototypes, mean, scale, loss and train_error per epoch.");
  m.def("_lvq_predict", &predict, py::arg("classes"), py::arg("per_class"), py::arg("prototypes"), py::arg("mean"),
        py::arg("scale"), py::arg("X"), py::arg("top"), py::arg("device"),
        "The `top` nearest classes of each row (indices into classes), nearest first.");
  m.def(
      "_lvq_read",
      [](py::handle path) {
        const std::string file = path_of(path);
        lvq::Model model;
        {
          py::gil_scoped_release release;
          model = lvq::read_model(file);
        }
        return model_dict(std::move(model));
      },
      py::arg("path"), "A .skq model as a dict (classes, per_class, prototypes, mean, scale).");
  m.def(
      "_lvq_write",
      [](py::handle path, const std::vector<std::string>& classes, std::size_t per_class, py::handle prototypes,
         py::handle mean, py::handle scale) {
        const lvq::Model model = model_of(classes, per_class, prototypes, mean, scale);
        const std::string file = path_of(path);
        py::gil_scoped_release release;
        lvq::write_model(model, file);
      },
      py::arg("path"), py::arg("classes"), py::arg("per_class"), py::arg("prototypes"), py::arg("mean"),
      py::arg("scale"), "Writes a .skq model, as `simkit lvq train` does.");
}

}  // namespace simkit::python
