// Shared by the disco tests (CPU and GPU): a model of the bundled Brown sentences.
#pragma once

#include <gtest/gtest.h>

#include "simkit/disco.hpp"
#include "test_support.hpp"

namespace simkit::test {

// A model of data/samples/postings/brown-sample.txt, its `words` most frequent words.
inline disco::Model sample_model(std::size_t words) {
  disco::BuildOptions options;
  options.words = words;
  return disco::build({(source_dir() / "data/samples/postings/brown-sample.txt").string()}, options);
}

// The same words, counts and weights, bit for bit.
inline void expect_same_model(const disco::Model& a, const disco::Model& b) {
  EXPECT_EQ(a.words, b.words);
  EXPECT_EQ(a.counts, b.counts);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.mi, b.mi);  // the same counts give the same floats
  EXPECT_EQ(a.mi_sums, b.mi_sums);
}

}  // namespace simkit::test
