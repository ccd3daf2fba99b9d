// Shared by the disco tests (CPU and GPU): a model of the bundled Brown sentences.
#pragma once

#include "simkit/disco.hpp"
#include "test_support.hpp"

namespace simkit::test {

// A model of data/samples/postings/brown-sample.txt, its `words` most frequent words.
inline disco::Model sample_model(std::size_t words) {
  disco::BuildOptions options;
  options.words = words;
  return disco::build({(source_dir() / "data/samples/postings/brown-sample.txt").string()}, options);
}

}  // namespace simkit::test
