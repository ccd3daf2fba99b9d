// Large host buffers faulted in on all cores before one thread writes them. A fresh
// allocation's pages are mapped one 4 KiB fault at a time as they are first written, so a
// std::vector of 200 MB (a million hashes' matches) took one thread 60-100 ms to zero;
// with its pages faulted in on every core first, the zeros cost a memory pass. Where the
// kernel grants transparent huge pages only to those who ask (Debian's "madvise"), such
// buffers ask: a fault then maps 2 MiB, not 4 KiB (222 MB faulted and zeroed in 20 ms,
// not 300 ms, on two cores).
#pragma once

#include <cstddef>
#include <vector>

namespace simkit {

// Asks for huge pages for the whole pages of [data, data + bytes), not yet written (Linux's
// MADV_HUGEPAGE). Does nothing below a few MiB, or where the kernel will not.
void advise_huge_pages(void* data, std::size_t bytes);

// Faults in the whole pages of [data, data + bytes) on all cores (Linux's
// MADV_POPULATE_WRITE, from 5.14), huge pages asked for first. Does nothing below a few
// MiB, or where the kernel cannot.
void prefault(void* data, std::size_t bytes);

// A vector of n elements, its pages faulted in on all cores first; the elements are then
// value-initialised (zeroed, on one thread) by a std::allocator's vector, and left unset by
// an UninitializedAllocator's of a trivial type.
template <typename Vector>
Vector faulted_in(std::size_t n) {
  Vector out;
  out.reserve(n);
  prefault(out.data(), n * sizeof(typename Vector::value_type));
  out.resize(n);
  return out;
}

// n zeroed elements, their pages faulted in first.
template <typename T>
std::vector<T> zeroed_vector(std::size_t n) {
  return faulted_in<std::vector<T>>(n);
}

}  // namespace simkit
