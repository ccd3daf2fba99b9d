// simkit.fuzzy_hash, fuzzy_hash_file, fuzzy_compare and dedup: ssdeep-compatible CTPH
// signatures and near-duplicate pairs (simkit/ctph.hpp, simkit/dedup.hpp).
#include <fmt/format.h>

#include "convert.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"

namespace simkit::python {

namespace {

std::string fuzzy_hash(py::handle data) {
  if (py::isinstance<py::str>(data)) {  // as python-ssdeep: text is hashed as UTF-8
    const std::string bytes = data.cast<std::string>();
    py::gil_scoped_release release;
    return ctph::hash({reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
  }
  if (!PyObject_CheckBuffer(data.ptr())) throw py::type_error("data: expected bytes, a buffer or str");
  const py::buffer_info buffer = py::reinterpret_borrow<py::buffer>(data).request();
  if (!PyBuffer_IsContiguous(buffer.view(), 'C')) throw UsageError("data: expected a contiguous buffer");
  const auto bytes = static_cast<std::size_t>(buffer.size * buffer.itemsize);
  py::gil_scoped_release release;
  return ctph::hash({static_cast<const unsigned char*>(buffer.ptr), bytes});
}

std::string fuzzy_hash_file(py::handle path) {
  const std::vector<std::string> files{path_of(path)};
  py::gil_scoped_release release;
  return dedup::hash_files(dedup::list_files(files, false), nullptr).at(0);  // as `simkit hash` names errors
}

int fuzzy_compare(const std::string& a, const std::string& b) {
  const int score = ctph::compare(a, b);
  if (score < 0) {
    ctph::Prepared unused;
    const std::string& bad = ctph::prepare(a, unused) ? b : a;
    throw InputError(Location{}, "malformed signature " + quote(bad));
  }
  return score;
}

py::list find_pairs(py::handle paths, const std::string& mode, int threshold, double rate, const std::string& device,
                    std::size_t signature_length, double candidate_factor) {
  if (mode != "ssdeep" && mode != "edit-rate")
    throw UsageError(fmt::format("--mode {}: expected ssdeep or edit-rate", quote(mode)));
  if (threshold < 1 || threshold > 100) throw UsageError("--threshold must be 1..100");
  const std::vector<std::string> names = paths_of(paths, "paths");
  const Device where = device_of(device);
  py::list out;
  if (mode == "ssdeep") {
    dedup::MatchList matches;
    dedup::Inputs in;
    {
      py::gil_scoped_release release;
      in = dedup::gather_inputs(names);
      dedup::hash_documents(in);
      const std::vector<ctph::Prepared> prepared = dedup::prepare_signatures(in);
      matches = where.cuda ? dedup::match_all_gpu(prepared, threshold, where.index)
                           : dedup::match_all(prepared, threshold);
    }
    for (const dedup::Match& m : matches) out.append(py::make_tuple(text(in.names[m.a]), text(in.names[m.b]), m.score));
    return out;
  }
  dedup::RateOptions options;
  options.rate = rate;
  options.signature_length = signature_length;
  options.candidate_factor = candidate_factor;
  options.device = where.cuda ? where.index : -1;
  std::vector<dedup::RateMatch> matches;
  dedup::Inputs in;
  {
    py::gil_scoped_release release;
    in = dedup::gather_inputs(names);
    if (in.documents.size() != in.names.size())
      throw UsageError("--mode edit-rate compares documents themselves, not ssdeep hash lists");
    matches = dedup::match_rates(in.documents, options);
  }
  for (const dedup::RateMatch& m : matches) out.append(py::make_tuple(text(in.names[m.a]), text(in.names[m.b]), m.rate));
  return out;
}

}  // namespace

void bind_dedup(py::module_& m) {
  m.def("fuzzy_hash", &fuzzy_hash, py::arg("data"),
        R"doc(The CTPH (fuzzy) signature of `data` (bytes or any contiguous buffer; str is hashed
as UTF-8), the same string as python-ssdeep's ssdeep.hash and ssdeep 2.14.1:
"blocksize:first:second".)doc");
  m.def("fuzzy_hash_file", &fuzzy_hash_file, py::arg("path"),
        "The signature of a file's bytes, as ssdeep.hash_from_file and `simkit hash` give it.");
  m.def("fuzzy_compare", &fuzzy_compare, py::arg("signature_a"), py::arg("signature_b"),
        R"doc(The match score of two signatures, 0 (unrelated) to 100, the same int as
ssdeep.compare (libfuzzy's fuzzy_compare). A malformed signature raises simkit.InputError.)doc");
  m.def("dedup", &find_pairs, py::arg("paths"), py::arg("mode") = "ssdeep", py::arg("threshold") = 1,
        py::arg("rate") = 0.1, py::arg("device") = "auto", py::arg("signature_length") = 100,
        py::arg("candidate_factor") = 3.0,
        R"doc(Every near-duplicate pair among files, directories (every file below them) and
ssdeep hash lists, as `simkit dedup` finds them: a list of (path_a, path_b, value), each
pair once, in the order of the inputs.

mode "ssdeep": pairs whose ssdeep match score is at least `threshold` (1..100; 1 gives
every match, as ssdeep -x), value the score (int). mode "edit-rate": pairs of documents
whose Levenshtein distance / (sum of lengths) is below `rate`, found through CTPH
signatures of at most `signature_length` characters and verified exactly, value the
rate (float). device: auto, cpu, cuda or cuda:N.)doc");
}

}  // namespace simkit::python
