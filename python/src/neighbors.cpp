// simkit.WordVectors: word-vector models, nearest words of words and expressions, and
// FAISS-style search of raw query vectors (simkit/neighbors.hpp).
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "convert.hpp"
#include "simkit/error.hpp"
#include "simkit/neighbors.hpp"

namespace simkit::python {

namespace {

using neighbors::Match;
using neighbors::Model;
using neighbors::Precision;

// A model and the searchers made for it, one per device (its GPUs), precision and split
// of several GPUs (on a GPU the model is uploaded once, when the first call asks for it).
class WordVectors {
 public:
  explicit WordVectors(Model model) : model_(std::move(model)) {}

  const Model& model() const { return model_; }

  // Answers with the GIL released; one search at a time per model. A searcher is kept for
  // each device (its GPUs), precision and split of several GPUs asked for.
  template <typename Fn>
  auto with_searcher(const std::string& device_name, const std::string& precision_name, const std::string& split_name,
                     Fn&& fn) {
    const Device device = device_of(device_name);
    const Precision precision = neighbors::parse_precision(precision_name);
    // The split only matters where several GPUs share a batch: elsewhere one searcher serves
    // every split (another would upload the model again).
    const neighbors::GpuSplit parsed = neighbors::parse_gpu_split(split_name);
    const neighbors::GpuSplit split = device.indices.size() > 1 ? parsed : neighbors::GpuSplit::Automatic;
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    neighbors::Searcher* searcher = nullptr;
    for (Entry& e : searchers_)
      if (e.cuda == device.cuda && e.indices == device.indices &&
          (!device.cuda || (e.precision == precision && e.split == split)))
        searcher = e.searcher.get();
    if (searcher == nullptr) {
      neighbors::SearchOptions options;
      options.device = device;
      options.precision = precision;
      options.gpu_split = split;
      searchers_.push_back({device.cuda, device.indices, precision, split,
                            std::make_unique<neighbors::Searcher>(model_, options)});
      searcher = searchers_.back().searcher.get();
    }
    auto result = fn(*searcher);
    last_search_ms_ = searcher->last_search_ms();
    return result;
  }

  double last_search_ms() const { return last_search_ms_; }

  py::list words() {
    if (!words_) {
      py::list list(model_.rows);
      for (std::size_t r = 0; r < model_.rows; ++r) list[r] = text(model_.word(r));
      words_ = list;
    }
    return *words_;
  }

  std::size_t row_of(const std::string& word) const {
    const auto row = model_.find(word);
    if (!row) throw py::key_error(word);
    return *row;
  }

 private:
  struct Entry {
    bool cuda = false;
    std::vector<int> indices;  // the GPUs
    Precision precision = Precision::Fp32;
    neighbors::GpuSplit split = neighbors::GpuSplit::Automatic;
    std::unique_ptr<neighbors::Searcher> searcher;
  };
  Model model_;
  std::mutex mutex_;
  std::vector<Entry> searchers_;
  std::optional<py::list> words_;
  double last_search_ms_ = 0;
};

py::list matches_list(const Model& model, const std::vector<Match>& matches) {
  py::list out;
  for (const Match& m : matches) out.append(py::make_tuple(text(model.word(m.row)), m.similarity));
  return out;
}

py::object neighbors_of(WordVectors& self, py::handle query, std::size_t k, const std::string& device,
                        const std::string& precision, const std::string& gpu_split) {
  const bool single = py::isinstance<py::str>(query);
  std::vector<std::string> lines;
  if (single) {
    lines.push_back(query.cast<std::string>());
  } else {
    for (const py::handle q : query) {
      if (!py::isinstance<py::str>(q)) throw UsageError("queries: expected a word, an expression or a list of them");
      lines.push_back(q.cast<std::string>());
    }
    if (lines.empty()) throw UsageError("queries: the list is empty");
  }
  if (k == 0) throw UsageError("--k must be at least 1");
  // Each query parsed and given its direction as the command line does ("query N").
  std::vector<neighbors::Query> queries;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string where = fmt::format("query {}", i + 1);
    neighbors::Query q = neighbors::parse_query(lines[i], self.model(), where);
    neighbors::query_vector(self.model(), q, where);
    queries.push_back(std::move(q));
  }
  const auto answers =
      self.with_searcher(device, precision, gpu_split, [&](neighbors::Searcher& s) { return s.search(queries, k); });
  if (single) return matches_list(self.model(), answers[0]);
  py::list out;
  for (const auto& a : answers) out.append(matches_list(self.model(), a));
  return out;
}

py::tuple search(WordVectors& self, py::handle queries, std::size_t k, const std::string& device,
                 const std::string& precision, const std::string& gpu_split) {
  const Model& model = self.model();
  const FloatArray q = float_array(queries, "queries", 2, model.dim);
  if (k == 0) throw UsageError("--k must be at least 1");
  const auto rows = static_cast<std::size_t>(q.shape(0));
  std::vector<std::vector<Match>> answers;
  if (rows > 0)
    answers = self.with_searcher(device, precision, gpu_split, [&](neighbors::Searcher& s) {
      return s.search_vectors({q.data(), rows * model.dim}, rows, k);
    });
  const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(k)};
  py::array_t<float> scores(shape);
  py::array_t<std::int64_t> indices(shape);
  auto s = scores.mutable_unchecked<2>();
  auto i = indices.mutable_unchecked<2>();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < k; ++j) {
      const bool filled = j < answers[r].size();
      s(r, j) = filled ? answers[r][j].similarity : kEmptyScore;
      i(r, j) = filled ? static_cast<std::int64_t>(answers[r][j].row) : -1;
    }
  return py::make_tuple(scores, indices);
}

std::unique_ptr<WordVectors> load(py::handle path, py::handle words, const std::string& format) {
  neighbors::LoadOptions options;
  options.format = neighbors::parse_format(format);
  if (!words.is_none()) options.words_path = path_of(words);
  const std::string file = path_of(path);
  py::gil_scoped_release release;
  return std::make_unique<WordVectors>(neighbors::load_model(file, options));
}

std::unique_ptr<WordVectors> from_vectors(const std::vector<std::string>& words, py::handle vectors) {
  const FloatArray v = float_array(vectors, "vectors", 2);
  if (static_cast<std::size_t>(v.shape(0)) != words.size())
    throw UsageError(fmt::format("{} words for {} vectors", words.size(), v.shape(0)));
  std::vector<float> values(v.data(), v.data() + v.size());
  const auto dim = static_cast<std::size_t>(v.shape(1));
  return std::make_unique<WordVectors>(neighbors::make_model(words, std::move(values), dim));
}

}  // namespace

void bind_neighbors(py::module_& m) {
  py::class_<WordVectors>(m, "WordVectors", R"doc(
A word-vector model: GloVe or word2vec text, word2vec binary, NumPy .npy with a word
list, or simkit's memory-mapped .skv (every format `simkit neighbors` reads).

    m = simkit.WordVectors.load("vectors.vec")
    m.neighbors("king - man + woman", k=5)    # [(word, similarity), ...]
    scores, indices = m.search(queries, k=10)  # like FAISS's IndexFlatIP.search
)doc")
      .def_static("load", &load, py::arg("path"), py::arg("words") = py::none(), py::arg("format") = "auto",
                  R"doc(Reads a model. `words` is the word list (a word a line) of an .npy matrix;
`format` is auto (detected from the content), glove, word2vec, word2vec-binary, npy or skv.
Raises OSError for a file that cannot be read, ValueError (simkit.InputError) naming
file and position for a malformed one.)doc")
      .def_static("from_vectors", &from_vectors, py::arg("words"), py::arg("vectors"),
                  "A model from a list of words and their vectors (a [len(words), dim] array; copied).")
      .def_property_readonly("words", &WordVectors::words, "The words, in the order of the file (a list of str).")
      .def_property_readonly(
          "vectors",
          [](py::object self) {
            const Model& model = self.cast<WordVectors&>().model();
            return read_only_view(model.vectors, {static_cast<py::ssize_t>(model.rows), static_cast<py::ssize_t>(model.dim)},
                                  self);
          },
          "The vectors, a read-only float32 view [rows, dim] (memory-mapped for .skv).")
      .def_property_readonly("dim", [](const WordVectors& self) { return self.model().dim; })
      .def_property_readonly("last_search_ms", &WordVectors::last_search_ms,
                             "Milliseconds the last neighbors or search call spent searching inside simkit (on a GPU: "
                             "device time from CUDA events); the rest of its time was the call's own.")
      .def_property_readonly("format", [](const WordVectors& self) { return std::string(neighbors::format_name(self.model().format)); })
      .def("__len__", [](const WordVectors& self) { return self.model().rows; })
      .def("__contains__", [](const WordVectors& self, const std::string& word) { return self.model().find(word).has_value(); })
      .def("index", &WordVectors::row_of, py::arg("word"), "The row of a word (KeyError when the model lacks it).")
      .def(
          "__getitem__",
          [](py::object self, const std::string& word) {
            const Model& model = self.cast<WordVectors&>().model();
            const std::size_t row = self.cast<WordVectors&>().row_of(word);
            return read_only_view(model.vectors + row * model.dim, {static_cast<py::ssize_t>(model.dim)}, self);
          },
          py::arg("word"), "A word's vector (a read-only view; KeyError when the model lacks the word).")
      .def("neighbors", &neighbors_of, py::arg("query"), py::arg("k") = 10, py::arg("device") = "auto",
           py::arg("precision") = "fp32", py::arg("gpu_split") = "auto",
           R"doc(The k most cosine-similar words of a word or an expression such as
"king - man + woman" (the mean of the terms' unit vectors, as gensim's most_similar), the
query's own words left out: a list of (word, similarity), best first, equal to
`simkit neighbors`. A list of queries gives a list of such lists, answered together.
`device` is auto, cpu, cuda, cuda:N, cuda:0,1 or cuda:all; `precision` (GPU) fp32, tf32,
fp16 or bf16; `gpu_split` (several GPUs) auto, rows or queries, as `--gpu-split` (the
answers are the same). An unknown word raises simkit.InputError (a ValueError) naming it.)doc")
      .def("search", &search, py::arg("queries"), py::arg("k") = 10, py::arg("device") = "auto",
           py::arg("precision") = "fp32", py::arg("gpu_split") = "auto",
           R"doc(For each row of `queries` (a [n, dim] array; float32 C order is used
without a copy), the k rows whose unit vectors have the largest dot product with it (the
cosine similarity for unit queries), as FAISS's IndexFlatIP.search over the normalised
rows: (scores float32 [n, k], indices int64 [n, k]), best first, ties by lower row;
-1 and -inf past the model's rows. `device`, `precision` and `gpu_split` as for neighbors.)doc")
      .def(
          "save",
          [](const WordVectors& self, py::handle path, const std::string& format) {
            const neighbors::Format f = neighbors::parse_format(format);
            if (f == neighbors::Format::Auto || f == neighbors::Format::Npy)
              throw UsageError(fmt::format("--to {}: expected skv, glove, word2vec or word2vec-binary", format));
            const std::string file = path_of(path);
            py::gil_scoped_release release;
            neighbors::save_model(self.model(), file, f);
          },
          py::arg("path"), py::arg("format") = "skv",
          "Writes the model (skv, glove, word2vec or word2vec-binary), atomically, as `simkit neighbors convert`.")
      .def("__repr__", [](const WordVectors& self) {
        return fmt::format("<simkit.WordVectors {} words x {} ({})>", self.model().rows, self.model().dim,
                           neighbors::format_name(self.model().format));
      });
}

}  // namespace simkit::python
