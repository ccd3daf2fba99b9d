// Shared by the libFuzzer targets: bad input must end in simkit::Error (the one-line
// refusal); anything else (a crash, a sanitizer report, another exception, a leak, an
// absurd allocation) is a finding.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <unistd.h>

#include "simkit/error.hpp"
#include "simkit/neighbors.hpp"

namespace simkit::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file in the temporary folder, removed when the object dies, for targets whose
// parser reads a path or whose check writes a file back (one input at a time a process);
// the name ends in `tag`, so a tag may carry an extension.
struct ScratchFile {
  std::string path;
  explicit ScratchFile(const std::string& tag)
      : path((std::filesystem::temp_directory_path() / ("fuzz-" + std::to_string(::getpid()) + "-" + tag)).string()) {}
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
};

// Runs `body`; a simkit::Error is the expected refusal of bad input.
template <typename Body>
int guarded(Body&& body) {
  try {
    body();
  } catch (const simkit::Error&) {
  }
  return 0;
}

// What every accepted model must satisfy: each word finds its own row, norms are finite,
// and a small search runs.
inline void exercise(const neighbors::Model& model) {
  for (std::size_t r = 0; r < model.rows && r < 64; ++r) {
    const auto found = model.find(model.word(r));
    if (!found || *found != r) std::abort();
    if (!std::isfinite(model.norms[r]) || model.norms[r] < 0) std::abort();
  }
  if (model.rows * model.dim > 200000) return;
  neighbors::SearchOptions options;
  options.k = 3;
  neighbors::Searcher searcher(model, options);
  const std::vector<neighbors::Query> queries = {neighbors::Query{"q", {{0, 1.0f}}}};
  try {
    const auto answers = searcher.search(queries);
    if (answers.size() != 1 || answers[0].size() > 3) std::abort();
  } catch (const simkit::InputError&) {
    // a zero vector has no direction: refused, fine
  }
}

}  // namespace simkit::fuzz
