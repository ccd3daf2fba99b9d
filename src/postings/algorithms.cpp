// The CPU intersection algorithms. Each takes lists ordered shortest first.
#include "postings/algorithms.hpp"

#include <algorithm>
#include <bit>

#include <immintrin.h>
#include <roaring/roaring.h>

namespace simkit::postings::detail {

namespace {

// First position >= from holding a value >= x (binary search over the rest).
std::size_t binary_from(List list, std::size_t from, DocId x) {
  return static_cast<std::size_t>(std::lower_bound(list.begin() + from, list.end(), x) - list.begin());
}

// The same by galloping: steps of 1, 2, 4, ... from `from`, then binary search in the
// last step, so a hit d places ahead costs O(log d).
std::size_t gallop_from(List list, std::size_t from, DocId x) {
  std::size_t step = 1, lo = from, hi = from;
  while (hi < list.size() && list[hi] < x) {
    lo = hi + 1;
    hi = from + step;
    step *= 2;
  }
  hi = std::min(hi, list.size());
  return static_cast<std::size_t>(std::lower_bound(list.begin() + lo, list.begin() + hi, x) - list.begin());
}

// Keeps the candidates found in `list`, searching from where the last one was found.
template <typename Search>
void filter(std::vector<DocId>& candidates, List list, Search search) {
  std::size_t kept = 0, at = 0;
  for (const DocId x : candidates) {
    at = search(list, at, x);
    if (at == list.size()) break;
    if (list[at] == x) candidates[kept++] = x;
  }
  candidates.resize(kept);
}

// Set-versus-set: the shortest list filtered by each next one.
template <typename Search>
void svs(std::span<const List> lists, std::vector<DocId>& out, Search search) {
  out.assign(lists[0].begin(), lists[0].end());
  for (std::size_t i = 1; i < lists.size() && !out.empty(); ++i) filter(out, lists[i], search);
}

// Demaine, Lopez-Ortiz and Munro's adaptive intersection: the current candidate is
// sought in the lists in turn; a miss makes the value found the new candidate, until
// every list holds the candidate.
void adaptive(std::span<const List> lists, std::vector<DocId>& out) {
  out.clear();
  const std::size_t k = lists.size();
  if (lists[0].empty()) return;
  std::vector<std::size_t> at(k, 0);
  DocId candidate = lists[0][0];
  std::size_t source = 0, agreeing = 1;
  for (std::size_t i = 1 % k;; i = (i + 1) % k) {
    if (agreeing == k) {
      out.push_back(candidate);
      if (++at[source] == lists[source].size()) return;
      candidate = lists[source][at[source]];
      agreeing = 1;
      i = source;
      continue;
    }
    if (i == source) continue;
    at[i] = gallop_from(lists[i], at[i], candidate);
    if (at[i] == lists[i].size()) return;
    if (lists[i][at[i]] == candidate) {
      ++agreeing;
    } else {
      candidate = lists[i][at[i]];
      source = i;
      agreeing = 1;
    }
  }
}

// The candidates (the shortest list) looked up in each other list's bucket only.
void hashed(std::span<const List> lists, std::span<const ListAux> aux, std::vector<DocId>& out) {
  out.assign(lists[0].begin(), lists[0].end());
  BucketDirectory own;
  for (std::size_t i = 1; i < lists.size() && !out.empty(); ++i) {
    const BucketDirectory* d = aux.empty() ? nullptr : aux[i].directory;
    if (d == nullptr) d = &(own = make_directory(lists[i]));
    const List list = lists[i];
    const std::size_t buckets = d->starts.size() - 1;
    std::size_t kept = 0;
    for (const DocId x : out) {
      const std::size_t b = x >> d->shift;
      if (b >= buckets) break;  // beyond the list's last id, and so are the rest
      const auto first = list.begin() + d->starts[b], last = list.begin() + d->starts[b + 1];
      const auto it = std::lower_bound(first, last, x);
      if (it != last && *it == x) out[kept++] = x;
    }
    out.resize(kept);
  }
}

// Plain linear merge of two lists into out (out must not alias a or b).
std::size_t merge_two(const DocId* a, std::size_t na, const DocId* b, std::size_t nb, DocId* out) {
  std::size_t i = 0, j = 0, k = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j]) ++i;
    else if (b[j] < a[i]) ++j;
    else out[k++] = a[i], ++i, ++j;
  }
  return k;
}

// Blocks of 8 from each list compared all against all (the 8 rotations of b's block),
// the block with the smaller last value moving on; Lemire-style, the tails merged.
__attribute__((target("avx2"))) std::size_t avx2_two(const DocId* a, std::size_t na, const DocId* b,
                                                     std::size_t nb, DocId* out) {
  std::size_t i = 0, j = 0, k = 0;
  const __m256i rotate = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
  while (i + 8 <= na && j + 8 <= nb) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
    __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j));
    __m256i hits = _mm256_cmpeq_epi32(va, vb);
    for (int r = 1; r < 8; ++r) {
      vb = _mm256_permutevar8x32_epi32(vb, rotate);
      hits = _mm256_or_si256(hits, _mm256_cmpeq_epi32(va, vb));
    }
    for (unsigned mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(hits))); mask != 0;
         mask &= mask - 1)
      out[k++] = a[i + static_cast<std::size_t>(std::countr_zero(mask))];
    const DocId a_last = a[i + 7], b_last = b[j + 7];
    if (a_last <= b_last) i += 8;
    if (b_last <= a_last) j += 8;
  }
  return k + merge_two(a + i, na - i, b + j, nb - j, out + k);
}

// Keeps the candidates found in `list` by blocks (AVX2 where `wide`) or a plain merge.
void merge_filter(std::vector<DocId>& candidates, List list, bool wide, std::vector<DocId>& scratch) {
  if (scratch.size() < candidates.size()) scratch.resize(candidates.size());  // (larger is fine: no zeroing)
  const std::size_t n = wide ? avx2_two(candidates.data(), candidates.size(), list.data(), list.size(), scratch.data())
                             : merge_two(candidates.data(), candidates.size(), list.data(), list.size(), scratch.data());
  scratch.resize(n);
  candidates.swap(scratch);
}

void simd(std::span<const List> lists, std::vector<DocId>& out, std::vector<DocId>& scratch) {
  out.assign(lists[0].begin(), lists[0].end());
  const bool wide = have_avx2();
  for (std::size_t i = 1; i < lists.size() && !out.empty(); ++i) merge_filter(out, lists[i], wide, scratch);
}

void bitmap(std::span<const List> lists, std::span<const ListAux> aux, std::vector<DocId>& out) {
  std::vector<Bitmap> own;
  const auto bitmap_of = [&](std::size_t i) -> const roaring_bitmap_t* {
    if (!aux.empty() && aux[i].bitmap != nullptr) return aux[i].bitmap;
    return own.emplace_back(make_bitmap(lists[i])).get();
  };
  Bitmap result(roaring_bitmap_copy(bitmap_of(0)));
  for (std::size_t i = 1; i < lists.size(); ++i) roaring_bitmap_and_inplace(result.get(), bitmap_of(i));
  out.resize(roaring_bitmap_get_cardinality(result.get()));
  roaring_bitmap_to_uint32_array(result.get(), out.data());
}

// Galloping where the lists differ much in length (a candidate skips many ids), SIMD
// blocks where they are alike (most ids are compared anyway).
bool skewed(List shorter, List longer) { return longer.size() >= 32 * std::max<std::size_t>(shorter.size(), 1); }

// The automatic choice, list by list: lists the index keeps a bitmap of test each
// candidate with one load; the others are met by galloping or SIMD blocks, as their
// lengths suggest. (Lists come shortest first, so the bitmaps' dense lists come last,
// when the candidates are fewest.)
void automatic(std::span<const List> lists, std::span<const ListAux> aux, std::vector<DocId>& out,
               std::vector<DocId>& scratch) {
  out.assign(lists[0].begin(), lists[0].end());
  const bool wide = have_avx2();
  for (std::size_t i = 1; i < lists.size() && !out.empty(); ++i) {
    if (const std::uint64_t* bits = aux.empty() ? nullptr : aux[i].bits; bits != nullptr) {
      const DocId base = aux[i].base;
      std::size_t kept = 0;
      for (const DocId x : out) {  // branch-free: every candidate written, kept when its bit is set
        out[kept] = x;
        kept += bit_of(bits, x - base);
      }
      out.resize(kept);
    } else if (skewed(out, lists[i])) {
      filter(out, lists[i], gallop_from);
    } else {
      merge_filter(out, lists[i], wide, scratch);
    }
  }
}

}  // namespace

BucketDirectory make_directory(List list) {
  BucketDirectory d;
  const int bucket_bits = std::max(9, static_cast<int>(std::bit_width(list.size())));
  const int id_bits = list.empty() ? 0 : static_cast<int>(std::bit_width(list.back()));
  d.shift = std::max(0, id_bits - bucket_bits);
  const std::size_t buckets = list.empty() ? 0 : (std::size_t{list.back()} >> d.shift) + 1;
  d.starts.assign(buckets + 1, 0);
  for (const DocId x : list) ++d.starts[(x >> d.shift) + 1];
  for (std::size_t b = 0; b < buckets; ++b) d.starts[b + 1] += d.starts[b];
  return d;
}

void BitmapDeleter::operator()(roaring_bitmap_s* bitmap) const noexcept { roaring_bitmap_free(bitmap); }

Bitmap make_bitmap(List list) {
  Bitmap bitmap(roaring_bitmap_of_ptr(list.size(), list.data()));
  if (!bitmap) throw std::bad_alloc();
  roaring_bitmap_run_optimize(bitmap.get());
  return bitmap;
}

bool have_avx2() noexcept {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

void intersect(std::span<const List> lists, std::span<const ListAux> aux, Algorithm algorithm,
               std::vector<DocId>& out, std::vector<DocId>& scratch) {
  if (lists.size() == 1 || lists[0].empty()) {
    out.assign(lists[0].begin(), lists[0].end());
    return;
  }
  switch (algorithm) {
    case Algorithm::svs: return svs(lists, out, binary_from);
    case Algorithm::galloping: return svs(lists, out, gallop_from);
    case Algorithm::adaptive: return adaptive(lists, out);
    case Algorithm::hash: return hashed(lists, aux, out);
    case Algorithm::simd: return simd(lists, out, scratch);
    case Algorithm::bitmap: return bitmap(lists, aux, out);
    case Algorithm::automatic: return automatic(lists, aux, out, scratch);
  }
}

}  // namespace simkit::postings::detail
