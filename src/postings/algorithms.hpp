// Internal: the CPU intersection algorithms over plain sorted lists (docs/postings.md).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "simkit/postings.hpp"

struct roaring_bitmap_s;

namespace simkit::postings::detail {

using List = std::span<const DocId>;

// The seed's hash buckets for one list: ids grouped by their high bits, so an id is
// looked up in its bucket only. Buckets are sized to the list (at least 512, the seed's).
struct BucketDirectory {
  int shift = 0;                      // bucket of id x: x >> shift
  std::vector<std::uint32_t> starts;  // bucket b is [starts[b], starts[b + 1])
};
BucketDirectory make_directory(List list);

// A list as a Roaring bitmap (CRoaring), freed by the deleter.
struct BitmapDeleter {
  void operator()(roaring_bitmap_s* bitmap) const noexcept;
};
using Bitmap = std::unique_ptr<roaring_bitmap_s, BitmapDeleter>;
Bitmap make_bitmap(List list);

// What the hash and bitmap algorithms build once per list (nullptr where not built), and
// the index's own bitmap of the list (Index::bitmap; bit id - base), which the automatic
// algorithm tests candidates against.
struct ListAux {
  const BucketDirectory* directory = nullptr;
  const roaring_bitmap_s* bitmap = nullptr;
  const std::uint64_t* bits = nullptr;
  DocId base = 0;
};

// Replaces `out` with the intersection of `lists` (ordered shortest first, each strictly
// increasing, at least one). `aux` has one entry a list, or is empty: what the hash and
// bitmap algorithms need is then built on the spot. `scratch` is reused between calls.
void intersect(std::span<const List> lists, std::span<const ListAux> aux, Algorithm algorithm,
               std::vector<DocId>& out, std::vector<DocId>& scratch);

// Whether an index keeps a bitmap of a list of `length` ids among `documents`
// (add_bitmaps): when it holds 1/32 of them or more (and at least 1,024 ids), so that
// the bitmap takes at most the list's own bytes.
inline bool dense(std::size_t length, std::uint64_t documents) {
  return length >= 1024 && length * 32 >= documents;
}

// Bit `at` of a bitmap's words (0 or 1), and setting it: one layout for the index's
// bitmaps, their check on reading and the CPU's filter (the GPU kernels test the same).
inline std::uint64_t bit_of(const std::uint64_t* words, std::uint64_t at) noexcept {
  return (words[at / 64] >> (at % 64)) & 1;
}
inline void set_bit(std::uint64_t* words, std::uint64_t at) noexcept { words[at / 64] |= std::uint64_t{1} << (at % 64); }

// Whether the simd algorithm runs AVX2 on this CPU (else a plain merge).
bool have_avx2() noexcept;

}  // namespace simkit::postings::detail
