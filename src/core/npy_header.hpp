// The header of a NumPy .npy file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace simkit::detail {

struct NpyHeader {
  std::string descr;                  // e.g. "<f4"
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
  std::size_t data_offset = 0;        // where the array's bytes start
};

// Parses magic, version, length and the dict literal; throws InputError with offsets.
NpyHeader read_npy_header(std::string_view bytes, const std::string& path);

}  // namespace simkit::detail
