// simkit.Disco: distributional word similarity (DISCO) models built from corpora, and
// their queries (simkit/disco.hpp).
#include <pybind11/stl.h>

#include <memory>

#include <fmt/format.h>

#include "convert.hpp"
#include "simkit/dedup.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/wordsim.hpp"

namespace simkit::python {

namespace {

using disco::Model;

std::unique_ptr<Model> build(py::handle corpus, int window, std::uint64_t min_count, std::size_t words,
                             std::size_t features, bool keep_case, const std::string& stopwords,
                             const std::string& input_format, const std::string& memory_budget) {
  disco::BuildOptions options;
  options.window = window;
  options.min_count = min_count;
  options.words = words;
  options.features = features;
  options.keep_case = keep_case;
  options.stopwords = stopwords;
  options.format = parse_text_format(input_format);
  if (!memory_budget.empty()) options.memory_budget = parse_byte_size(memory_budget);
  const std::vector<std::string> paths = paths_of(corpus, "corpus");
  py::gil_scoped_release release;
  const std::vector<std::string> files = dedup::list_files(paths, true);
  auto model = std::make_unique<Model>(disco::build(files, options));
  if (model->size() == 0)  // as `simkit disco build` refuses it
    throw InputError(Location{files.size() == 1 ? files[0] : paths[0]},
                     "the corpus has no word that could be paired (empty, or only stop words)");
  return model;
}

py::list similar(const Model& model, const std::string& word, std::size_t k) {
  if (k == 0) throw UsageError("--k must be at least 1");
  const std::size_t row = disco::lookup(model, word);
  std::vector<disco::Neighbour> found;
  {
    py::gil_scoped_release release;
    found = disco::most_similar(model, row, k);
  }
  py::list out;
  for (const disco::Neighbour& n : found) out.append(py::make_tuple(text(model.words[n.word]), n.score));
  return out;
}

py::tuple all_similar(const Model& model, std::size_t k, const std::string& device, const std::string& form,
                      std::size_t features, const std::string& precision) {
  if (k == 0) throw UsageError("--k must be at least 1");
  disco::AllPairsOptions options;
  options.k = std::min(k, std::max<std::size_t>(model.size(), 2) - 1);
  if (form == "dense") options.form = disco::Form::dense;
  else if (form == "sparse") options.form = disco::Form::sparse;
  else throw UsageError(fmt::format("--form {}: expected dense or sparse", quote(form)));
  options.features = features;
  if (precision == "fp32") options.precision = disco::Precision::fp32;
  else if (precision == "tf32") options.precision = disco::Precision::tf32;
  else if (precision == "fp16") options.precision = disco::Precision::fp16;
  else throw UsageError(fmt::format("--precision {}: expected fp32, tf32 or fp16", quote(precision)));
  options.device = device_index(device);
  TopKLists lists;
  {
    py::gil_scoped_release release;
    lists = disco::all_pairs(model, options);
  }
  return topk_arrays(lists);
}

}  // namespace

void bind_disco(py::module_& m) {
  py::class_<Model>(m, "Disco", R"doc(
A DISCO model: words alike because they keep the same company. Window co-occurrences
<w1, r, w2> counted over a corpus, their mutual information, and Lin's similarity of two
words' feature sets (the thesis's formulas 3.7 and 3.8), as `simkit disco` computes them.

    d = simkit.Disco.build(["corpus.txt"], window=4)
    d.similar("king", k=5)   # [(word, score), ...]
    d.compare("cat", "dog")  # 0..1
)doc")
      .def_static("build", &build, py::arg("corpus"), py::arg("window") = 4, py::arg("min_count") = 1,
                  py::arg("words") = 0, py::arg("features") = 0, py::arg("keep_case") = false,
                  py::arg("stopwords") = "", py::arg("input_format") = "auto", py::arg("memory_budget") = "",
                  R"doc(Counts a corpus: text files or directories (plain, .gz, .bz2, .zst; Wikipedia XML
dumps), as `simkit disco build`. window: each word pairs with the window - 1 words on each
side; min_count: words seen fewer times are dropped; words: vectors for the N most
frequent words only (0: all); features: also keep the dense form over F features;
stopwords: "" (the bundled English list), "none" or a file; memory_budget: e.g. "2G"
(counts beyond it spill to temporary files).)doc")
      .def_static(
          "load",
          [](py::handle path) {
            const std::string file = path_of(path);
            py::gil_scoped_release release;
            return std::make_unique<Model>(disco::read_model(file));
          },
          py::arg("path"), "Reads a model (.skd).")
      .def(
          "save",
          [](const Model& self, py::handle path) {
            const std::string file = path_of(path);
            py::gil_scoped_release release;
            disco::write_model(self, file);
          },
          py::arg("path"), "Writes the model (.skd, atomically).")
      .def("similar", &similar, py::arg("word"), py::arg("k") = 10,
           "The k words most similar to `word` (itself excluded): a list of (word, score), best first, ties by the "
           "more frequent word; the rows of `simkit disco similar`.")
      .def(
          "compare",
          [](const Model& self, const std::string& a, const std::string& b) {
            return disco::similarity(self, disco::lookup(self, a), disco::lookup(self, b));
          },
          py::arg("word_a"), py::arg("word_b"), "The model's similarity of two words (Lin's, or the cosine of their PPMI rows), as `simkit disco compare`.")
      .def(
          "evaluate",
          [](const Model& self, py::handle gold) {
            const std::string file = path_of(gold);
            py::gil_scoped_release release;
            const wordsim::Evaluation e = disco::evaluate(self, wordsim::read_gold(file));
            return std::make_tuple(e.rho, e.covered);
          },
          py::arg("gold_path"),
          R"doc(Spearman's rho of the model's similarities against a gold standard
('word1<TAB>word2<TAB>score' lines: WordSim-353, SimLex-999, ...), over the pairs whose
both words the model has: (rho, pairs), pairs the number of those pairs.)doc")
      .def("all_similar", &all_similar, py::arg("k") = 10, py::arg("device") = "auto", py::arg("form") = "dense",
           py::arg("features") = 0, py::arg("precision") = "fp32",
           R"doc(Every word's k most similar words through the pairwise engine (`simkit disco similar
--all`): (scores float32 [N, k], indices int64 [N, k]), rows and indices being words'
rows in `words`. form: dense (one matrix product over `features` columns, 0 = every
feature) or sparse; precision (GPU, dense): fp32, tf32 or fp16.)doc")
      .def_property_readonly("words",
                             [](const Model& self) {
                               py::list out;
                               for (const std::string& w : self.words) out.append(text(w));
                               return out;
                             },
                             "The words with vectors, most frequent first.")
      .def_property_readonly("window", [](const Model& self) { return self.window; })
      .def("__len__", &Model::size)
      .def("__contains__", [](const Model& self, const std::string& word) {
        return self.find(disco::model_form(self, word)).has_value();
      })
      .def("__repr__", [](const Model& self) {
        return fmt::format("<simkit.Disco {} words, window {}, {} features of MI > 0>", self.size(), self.window,
                           self.features.size());
      });
}

}  // namespace simkit::python
