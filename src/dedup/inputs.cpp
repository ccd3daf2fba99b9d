// The inputs of `simkit dedup`: files, directories and ssdeep hash lists, in order.
#include <oneapi/tbb/parallel_for.h>

#include <cstdint>

#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"

namespace simkit::dedup {

Inputs gather_inputs(const std::vector<std::string>& paths) {
  Inputs in;
  const auto add_document = [&](const std::string& file) {
    in.document_at.push_back(in.names.size());
    in.documents.push_back(file);
    in.names.push_back(file);
    in.signatures.emplace_back();
  };
  for (const std::string& path : paths) {
    const std::vector<std::string> files = list_files({path}, true);
    if (files.size() == 1 && files[0] == path) {
      const MappedFile file = MappedFile::open(path);
      if (is_hash_list(file.text())) {
        std::vector<HashEntry> entries = read_hash_list(file.text(), path);
        const std::size_t at = in.names.size();
        in.names.resize(at + entries.size());
        in.signatures.resize(at + entries.size());
        tbb::parallel_for(std::size_t{0}, entries.size(), [&](std::size_t k) {
          HashEntry& e = entries[k];
          in.names[at + k] = e.file.empty() ? e.signature : std::move(e.file);
          in.signatures[at + k] = std::move(e.signature);
        });
        continue;
      }
    }
    for (const std::string& file : files) add_document(file);
  }
  return in;
}

void hash_documents(Inputs& in, Progress* progress) {
  std::vector<std::string> hashed = hash_files(in.documents, progress);
  for (std::size_t k = 0; k < hashed.size(); ++k) in.signatures[in.document_at[k]] = std::move(hashed[k]);
}

std::vector<ctph::Prepared> prepare_signatures(const Inputs& in, ctph::Substrings substrings) {
  std::vector<ctph::Prepared> prepared(in.names.size());
  std::vector<std::uint8_t> ok(in.names.size());
  tbb::parallel_for(std::size_t{0}, in.names.size(),
                    [&](std::size_t i) { ok[i] = ctph::prepare(in.signatures[i], prepared[i], substrings); });
  // The first malformed one in the list's order is the one reported.
  for (std::size_t i = 0; i < in.names.size(); ++i)
    if (!ok[i]) throw InputError(Location{in.names[i]}, "malformed signature " + quote(in.signatures[i]));
  return prepared;
}

void add_substrings(std::vector<ctph::Prepared>& prepared) {
  tbb::parallel_for(std::size_t{0}, prepared.size(), [&](std::size_t i) { ctph::add_substrings(prepared[i]); });
}

}  // namespace simkit::dedup
