// simkit.intersect and simkit.PostingsIndex: posting lists and batches of AND queries
// (simkit/postings.hpp).
#include <pybind11/stl.h>

#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "convert.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "simkit/postings.hpp"

namespace simkit::python {

namespace {

using postings::DocId;
using postings::Index;

py::array_t<DocId> intersect(py::handle lists, const std::string& algorithm_name) {
  const postings::Algorithm algorithm = postings::parse_algorithm(algorithm_name);
  std::vector<IdArray> arrays;
  if (!py::isinstance<py::iterable>(lists) || py::isinstance<py::str>(lists))
    throw UsageError("lists: expected a list of id arrays");
  for (const py::handle list : lists) arrays.push_back(uint32_array(list, fmt::format("lists[{}]", arrays.size())));
  if (arrays.empty()) throw UsageError("lists: the list is empty");
  std::vector<std::span<const DocId>> spans;
  for (std::size_t l = 0; l < arrays.size(); ++l) {
    const DocId* ids = arrays[l].data();
    const auto n = static_cast<std::size_t>(arrays[l].size());
    for (std::size_t i = 1; i < n; ++i)
      if (ids[i] <= ids[i - 1])
        throw InputError(Location{fmt::format("lists[{}]", l)},
                         fmt::format("ids must be strictly increasing: {} at position {} follows {}", ids[i], i, ids[i - 1]));
    spans.emplace_back(ids, n);
  }
  std::vector<DocId> out;
  {
    py::gil_scoped_release release;
    postings::intersect_lists(spans, algorithm, out);
  }
  const auto size = static_cast<py::ssize_t>(out.size());
  return owned_array(std::move(out), {size});
}

// An index and, once a query asks for a GPU, its copy there.
class PostingsIndex {
 public:
  explicit PostingsIndex(Index index) : index_(std::move(index)) {}
  const Index& index() const { return index_; }

  py::list query(py::handle queries, const std::string& algorithm_name, const std::string& device_name,
                 bool keep_case) {
    const postings::Queries batch = parse(queries, keep_case);
    const postings::Algorithm algorithm = postings::parse_algorithm(algorithm_name);
    // As the command line: a CPU algorithm named with device auto means the CPU.
    const Device device =
        device_of(algorithm != postings::Algorithm::automatic && device_name == "auto" ? "cpu" : device_name);
    postings::Results results;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (device.cuda) {
        if (!gpu_ || gpu_device_ != device.index) {
          gpu_.reset();
          postings::GpuOptions options;
          options.device = device.index;
          gpu_ = std::make_unique<postings::GpuIndex>(index_, options);
          gpu_device_ = device.index;
        }
        results = gpu_->intersect(batch);
      } else {
        results = postings::intersect_cpu(index_, batch, algorithm);
      }
    }
    // One array of all answers; each query's answer a view of its part.
    const std::vector<std::uint64_t> offsets = results.offsets;
    const auto total = static_cast<py::ssize_t>(results.ids.size());
    const py::array_t<DocId> all = owned_array(std::move(results.ids), {total});
    py::list out;
    for (std::size_t q = 0; q + 1 < offsets.size(); ++q)
      out.append(all[py::slice(static_cast<py::ssize_t>(offsets[q]), static_cast<py::ssize_t>(offsets[q + 1]), 1)]);
    return out;
  }

 private:
  // Queries of words (str) or of term ids (sequences of ints), read by the same parser
  // as `simkit postings query` (messages name "queries:N", N the query from 1).
  postings::Queries parse(py::handle queries, bool keep_case) const {
    if (!py::isinstance<py::iterable>(queries) || py::isinstance<py::str>(queries))
      throw UsageError("queries: expected a list of queries (str of words, or sequences of term ids)");
    std::string lines;
    std::size_t count = 0, words = 0;
    for (const py::handle q : queries) {
      ++count;
      if (py::isinstance<py::str>(q)) {
        const std::string line = q.cast<std::string>();
        if (line.find_first_of("\r\n") != std::string::npos)
          throw InputError(Location{fmt::format("queries:{}", count)}, "a query is one line: found a line break");
        lines += line;
        ++words;
      } else {
        if (!py::isinstance<py::iterable>(q))
          throw UsageError(fmt::format("queries[{}]: expected a str of words or a sequence of term ids", count - 1));
        for (const py::handle id : q) lines += fmt::format("{} ", py::str(id).cast<std::string>());
      }
      lines += '\n';
    }
    if (count == 0) throw UsageError("queries: the list is empty");
    if (words != 0 && words != count) throw UsageError("queries: give all as words or all as term ids");
    return postings::parse_queries(lines, "queries", index_, words != 0, keep_case);
  }

  Index index_;
  std::mutex mutex_;
  std::unique_ptr<postings::GpuIndex> gpu_;
  int gpu_device_ = -1;
};

std::unique_ptr<PostingsIndex> build(const std::vector<std::string>& documents, bool keep_case, std::size_t min_count) {
  if (documents.empty()) throw UsageError("documents: the list is empty");
  postings::BuildOptions options;
  options.keep_case = keep_case;
  options.min_count = min_count;
  py::gil_scoped_release release;
  return std::make_unique<PostingsIndex>(postings::index_texts(documents, options));
}

std::unique_ptr<PostingsIndex> build_files(py::handle paths, bool document_per_file, bool keep_case, std::size_t min_count) {
  postings::BuildOptions options;
  options.document_per_file = document_per_file;
  options.keep_case = keep_case;
  options.min_count = min_count;
  const std::vector<std::string> names = paths_of(paths, "paths");
  py::gil_scoped_release release;
  return std::make_unique<PostingsIndex>(postings::build_index(dedup::list_files(names, true), options));
}

}  // namespace

void bind_postings(py::module_& m) {
  m.def("intersect", &intersect, py::arg("lists"), py::arg("algorithm") = "auto",
        R"doc(The ids common to every list (each a 1-D array of strictly increasing ids; uint32
is used without a copy, other integer dtypes converted once): a uint32 array, ascending.
algorithm: auto, svs, adaptive, hash, galloping, simd or bitmap (docs/postings.md).)doc");

  py::class_<PostingsIndex>(m, "PostingsIndex", R"doc(
An inverted index: for each word (term) the sorted ids of the documents holding it, and
batches of AND queries over it, as `simkit postings` builds and queries them.

    idx = simkit.PostingsIndex.build(["the cat sat", "a dog", "the dog sat"])
    idx.query(["the sat", "dog"])   # [array([0, 2], dtype=uint32), array([1, 2], dtype=uint32)]
)doc")
      .def_static("build", &build, py::arg("documents"), py::arg("keep_case") = false, py::arg("min_count") = 1,
                  R"doc(An index of documents in memory (a list of str; document i has id i). Words are
split at Unicode word boundaries (ICU) and lower-cased unless keep_case; terms in fewer
than min_count documents are left out.)doc")
      .def_static("build_files", &build_files, py::arg("paths"), py::arg("document_per_file") = false,
                  py::arg("keep_case") = false, py::arg("min_count") = 1,
                  R"doc(An index of text files or directories, as `simkit postings build`: one document a
line (id = line number - 1, counted across the files in order), or one a file.)doc")
      .def_static(
          "load",
          [](py::handle path) {
            const std::string file = path_of(path);
            py::gil_scoped_release release;
            return std::make_unique<PostingsIndex>(postings::read_any_index(file));
          },
          py::arg("path"), "Reads simkit's .skp index or the seed's ExpIndex (told apart by their first bytes).")
      .def(
          "save",
          [](const PostingsIndex& self, py::handle path) {
            const std::string file = path_of(path);
            py::gil_scoped_release release;
            postings::write_index(self.index(), file);
          },
          py::arg("path"), "Writes the index as .skp (atomically).")
      .def("query", &PostingsIndex::query, py::arg("queries"), py::arg("algorithm") = "auto", py::arg("device") = "auto",
           py::arg("keep_case") = false,
           R"doc(Answers a batch of AND queries: each a str of words (looked up in the vocabulary,
lower-cased unless keep_case; a word the index lacks matches nothing) or a sequence of
term ids. Returns a list of uint32 arrays, the ids of the documents holding every term,
ascending: the answers of `simkit postings query`. algorithm as for simkit.intersect
(naming one with device auto runs on the CPU); device: auto, cpu, cuda or cuda:N.)doc")
      .def_property_readonly("vocabulary",
                             [](const PostingsIndex& self) {
                               py::list out;
                               for (const std::string& w : self.index().vocabulary) out.append(text(w));
                               return out;
                             },
                             "The terms' words, sorted (empty for an ExpIndex).")
      .def_property_readonly("documents", [](const PostingsIndex& self) { return self.index().documents; },
                             "The number of documents (every id is below it).")
      .def("__len__", [](const PostingsIndex& self) { return self.index().terms(); })
      .def(
          "term",
          [](const PostingsIndex& self, const std::string& word) -> py::object {
            const std::int64_t t = self.index().find(word);
            return t < 0 ? py::object(py::none()) : py::int_(t);
          },
          py::arg("word"), "The term id of a word as stored (None when the vocabulary lacks it).")
      .def(
          "list",
          [](py::object self, std::size_t term) {
            const Index& index = self.cast<PostingsIndex&>().index();
            if (term >= index.terms())
              throw UsageError(fmt::format("term {} is out of range: the index has {} terms", term, index.terms()));
            const std::span<const DocId> ids = index.list(term);
            return read_only_view(ids.data(), {static_cast<py::ssize_t>(ids.size())}, self);
          },
          py::arg("term"), "A term's posting list: a read-only uint32 view, ascending.")
      .def("__repr__", [](const PostingsIndex& self) {
        return fmt::format("<simkit.PostingsIndex {} terms, {} documents, {} postings>", self.index().terms(),
                           self.index().documents, self.index().ids.size());
      });
}

}  // namespace simkit::python
