// Block planning shared by the CPU and GPU pairwise engines.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "simkit/pairwise.hpp"

namespace simkit::detail {

// Refuses jobs the engines cannot run (sizes past 32-bit indices, symmetric with A != B).
void validate(const PairwiseJob& job);

struct BlockSizes {
  std::size_t a = 1;
  std::size_t b = 1;
};

// Cuts A x B into tiles of at most `tile_elements` scores: at most `preferred_a` rows
// of A and as many of B as fit. Symmetric jobs get square tiles so that blocks line up
// with the diagonal.
BlockSizes block_sizes(const PairwiseJob& job, std::size_t tile_elements, std::size_t preferred_a);

// Every block pair to score, A-block major (an A block stays staged while B streams
// past it); symmetric jobs keep a-block <= b-block.
std::vector<std::pair<RowRange, RowRange>> block_pairs(const PairwiseJob& job, BlockSizes sizes);

void sort_pairs(std::vector<ScoredPair>& pairs);

}  // namespace simkit::detail
