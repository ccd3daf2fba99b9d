// Large host buffers faulted in on all cores before one thread writes them. A fresh
// allocation's pages are mapped one 4 KiB fault at a time as they are first written, so a
// std::vector of 200 MB (a million hashes' matches) took one thread 60-100 ms to zero;
// with its pages faulted in on every core first, the zeros cost a memory pass.
#pragma once

#include <cstddef>
#include <vector>

namespace simkit {

// Faults in the whole pages of [data, data + bytes) on all cores (Linux's
// MADV_POPULATE_WRITE, from 5.14). Does nothing below a few MiB, or where the kernel
// cannot.
void prefault(void* data, std::size_t bytes);

// n value-initialised elements, their pages faulted in first.
template <typename T>
std::vector<T> zeroed_vector(std::size_t n) {
  std::vector<T> out;
  out.reserve(n);
  prefault(out.data(), n * sizeof(T));
  out.resize(n);
  return out;
}

}  // namespace simkit
