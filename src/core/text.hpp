// Small string helpers usable from CUDA sources, where fmt's compile-time checks fail.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace simkit {

// Concatenates the arguments as an ostream would print them.
template <typename... Parts>
std::string cat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

}  // namespace simkit
