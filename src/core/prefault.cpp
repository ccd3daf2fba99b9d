#include "core/prefault.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include <oneapi/tbb/parallel_for.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14's value, for older headers
#endif

namespace simkit {

namespace {

constexpr std::size_t kLeast = std::size_t{4} << 20;  // smaller buffers fault in quickly as they are

// The whole pages of [data, data + bytes): [begin, end), empty where there are none.
std::pair<std::uintptr_t, std::uintptr_t> whole_pages(const void* data, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + page - 1) / page * page, end = (at + bytes) / page * page;
  return {begin, std::max(begin, end)};
}

}  // namespace

void advise_huge_pages(void* data, std::size_t bytes) {
  if (data == nullptr || bytes < kLeast) return;
  const auto [begin, end] = whole_pages(data, bytes);
  // EINVAL where the kernel has no huge pages: the pages stay small.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void prefault(void* data, std::size_t bytes) {
  constexpr std::size_t kPiece = std::size_t{4} << 20;
  if (data == nullptr || bytes < kLeast) return;
  advise_huge_pages(data, bytes);
  const std::pair<std::uintptr_t, std::uintptr_t> pages = whole_pages(data, bytes);
  const std::uintptr_t begin = pages.first, end = pages.second;  // (captured below: no structured binding)
  if (end <= begin) return;
  const std::size_t pieces = (end - begin + kPiece - 1) / kPiece;
  tbb::parallel_for(std::size_t{0}, pieces, [&](std::size_t i) {
    const std::uintptr_t from = begin + i * kPiece, to = std::min<std::uintptr_t>(end, from + kPiece);
    // An old kernel (EINVAL) or memory it will not map now (the writes fault as before).
    (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  });
}

}  // namespace simkit
