// Which entries of a score block take part in selection, in global row/column numbers.
// Symmetric jobs score each unordered pair once, so a diagonal block keeps only one
// triangle and lends each score to both of its rows.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define SIMKIT_HOST_DEVICE __host__ __device__
#else
#define SIMKIT_HOST_DEVICE
#endif

namespace simkit::detail {

struct BlockMask {
  bool skip_diagonal = false;  // drop col == row
  int triangle = 0;            // +1: keep col >= row, -1: keep col <= row, 0: keep all

  SIMKIT_HOST_DEVICE bool keeps(std::size_t row, std::size_t col) const noexcept {
    if (skip_diagonal && row == col) return false;
    if (triangle > 0) return col >= row;
    if (triangle < 0) return col <= row;
    return true;
  }
};

}  // namespace simkit::detail
