// Internal, CUDA only: words' features as inverted lists on the device, and the kernel
// that adds the terms of the features two words share to a score tile. The sparse form
// scores every feature this way (sparse_pairs.cu); the dense form scores its rarer
// columns this way beside the product of its common ones (all_pairs.cu).
//
// A tile of words I x J gets, for each word i of I, its features in their order: the
// part of a feature's postings inside J comes from two binary searches, and a warp's
// lanes add to distinct words j of it in shared memory, so each score gets its terms in
// the order of i's features and runs repeat exactly; the sums then go to the tile in one
// pass, with Lin's division.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/cuda/memory.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::disco::detail {

// Each word's kept features (word-major) and each kept feature's postings (words
// ascending), with the words' values, on a device; add() adds each pair's shared terms to
// a tile.
class FeatureListsOnDevice {
 public:
  static constexpr std::uint32_t kNoList = 0xffffffffu;
  // The most device memory the lists of `words` words with these list sizes take while
  // they are made from `entries` entries with keys below `keys` (the entries themselves,
  // uploaded by the caller, included).
  static std::size_t build_bytes(std::size_t words, std::size_t entries, std::size_t keys,
                                 const std::vector<std::uint32_t>& sizes);

  FeatureListsOnDevice() = default;
  // Inverted on the device from the words' entries there: word w's are keys and values
  // [offsets[w], offsets[w + 1]); an entry goes to list list_of[key] (kNoList: left out),
  // list l gets sizes[l] postings (the entries of its keys).
  FeatureListsOnDevice(std::size_t words, const std::uint64_t* offsets, const std::uint32_t* keys, const float* values,
                       const std::vector<std::uint32_t>& list_of, const std::vector<std::uint32_t>& sizes);
  bool empty() const { return empty_; }
  // For i in a, j in b: tile[i - a.begin][j - b.begin] plus (`accumulate`; else in place
  // of it) the sum over the features words i and j share of a_if a_jf (`product`:
  // cosine's terms) or a_if + a_jf (Lin's), divided by sums[i] + sums[j] when `sums` (every
  // word's, indexed by word) is given (0 where that is 0).
  void add(RowRange a, RowRange b, bool product, bool accumulate, const float* sums, float* tile, std::size_t ld,
           cudaStream_t stream) const;

 private:
  bool empty_ = true;  // no postings: nothing to add
  cuda::DeviceBuffer<std::uint64_t> word_offsets_;
  cuda::DeviceBuffer<std::uint32_t> word_lists_, list_offsets_, list_words_;
  cuda::DeviceBuffer<float> word_values_, list_values_;
};

}  // namespace simkit::disco::detail
