// Reading and writing posting-list indexes: the seed's ExpIndex and simkit's .skp.
//
// .skp, version 3 (all integers little-endian, sections on 64-byte boundaries):
//   header (128 bytes): "SIMKITPL", u32 version, u32 header bytes, u64 terms, u64 ids,
//                      u64 documents, u64 vocabulary words (0 or terms), u64 word bytes,
//                      u64 file size, u64 bitmaps, zeros
//   offsets       (terms + 1) uint64 into ids
//   ids           uint32, each list strictly increasing, every id < documents
//   bitmap terms  bitmaps uint32, strictly increasing term ids
//   bitmap words  bitmaps x ceil(documents / 64) uint64: bit d of bitmap i set when
//                 document d is in list bitmap_terms[i] (equal to the list, checked)
//   word offsets  (words + 1) uint64 into the word bytes (absent when words = 0)
//   words         the words back to back, UTF-8, in strictly increasing byte order
//   checksum      uint64 of every byte before it (at an 8-byte boundary):
//                 detail::piece_checksum's, the XXH3-64 of its 64 MiB pieces' XXH3-64s
// Version 2 is the same with one XXH3-64 of every byte as its checksum; version 1 also has
// a 64-byte header and no bitmap sections (its bitmaps are built on reading). Both are read.
#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/binary_io.hpp"
#include "postings/algorithms.hpp"
#include "text/utf8.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/postings.hpp"

namespace simkit::postings {

namespace {

using simkit::detail::align64;
using simkit::detail::load;

constexpr char kMagic[8] = {'S', 'I', 'M', 'K', 'I', 'T', 'P', 'L'};
constexpr std::uint32_t kVersion = 3;  // 3: the checksum in pieces; 2: bitmaps

std::uint32_t header_bytes(std::uint32_t version) { return version == 1 ? 64 : 128; }

struct Layout {
  std::uint64_t offsets, ids, bitmap_terms, bitmap_words, word_offsets, words, checksum, file_size;
};

Layout layout(std::uint32_t version, std::uint64_t terms, std::uint64_t ids, std::uint64_t bitmap_words,
              std::uint64_t bitmaps, std::uint64_t words, std::uint64_t word_bytes) {
  Layout l{};
  l.offsets = header_bytes(version);
  l.ids = align64(l.offsets + (terms + 1) * 8);
  l.bitmap_terms = align64(l.ids + ids * 4);
  l.bitmap_words = align64(l.bitmap_terms + bitmaps * 4);
  l.word_offsets = align64(l.bitmap_words + bitmap_words * 8);
  l.words = align64(l.word_offsets + (words == 0 ? 0 : (words + 1) * 8));
  l.checksum = (l.words + word_bytes + 7) / 8 * 8;
  l.file_size = l.checksum + 8;
  return l;
}

// Refuses bitmaps out of order, or one that differs from its list: its bits must be
// the list's ids, no more (the count) and no fewer.
void check_bitmaps(const Index& index, const std::string& name, const Layout& l) {
  const std::size_t stride = index.bitmap_stride();
  for (std::size_t i = 0; i < index.bitmap_terms.size(); ++i) {
    const std::uint32_t term = index.bitmap_terms[i];
    if (term >= index.terms() || (i > 0 && term <= index.bitmap_terms[i - 1]))
      throw InputError(Location::at_offset(name, l.bitmap_terms + 4 * i),
                       fmt::format("bitmap {}: term {} is out of range or out of order", i, term));
    const std::uint64_t* bits = index.bitmap_words.data() + i * stride;
    std::uint64_t set = 0;
    for (std::size_t w = 0; w < stride; ++w) set += static_cast<std::uint64_t>(std::popcount(bits[w]));
    bool all = set == index.list(term).size();
    for (const DocId d : index.list(term)) all = all && detail::bit_of(bits, d - index.first_document) != 0;
    if (!all)
      throw InputError(Location::at_offset(name, l.bitmap_words + 8 * i * stride),
                       fmt::format("bitmap {} differs from the list of term {} it stands for", i, term));
  }
}

// Refuses a list that is not strictly increasing or holds an id >= documents.
void check_list(std::span<const DocId> list, std::uint64_t documents, const std::string& name,
                std::uint64_t first_byte, std::size_t term) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0 && list[i] <= list[i - 1])
      throw InputError(Location::at_offset(name, first_byte + 4 * i),
                       fmt::format("list {}: id {} after {}: {}", term, list[i], list[i - 1],
                                   list[i] == list[i - 1] ? "duplicate id" : "ids not in increasing order"));
    if (list[i] >= documents)
      throw InputError(Location::at_offset(name, first_byte + 4 * i),
                       fmt::format("list {}: id {} is not below the {} documents the header names", term,
                                   list[i], documents));
  }
}

}  // namespace

std::int64_t Index::find(std::string_view word) const noexcept {
  const auto it = std::lower_bound(vocabulary.begin(), vocabulary.end(), word,
                                   [](const std::string& a, std::string_view b) { return a < b; });
  return it != vocabulary.end() && *it == word ? it - vocabulary.begin() : -1;
}

Index parse_exp_index(std::string_view bytes, const std::string& name) {
  Index index;
  index.ids.reserve(bytes.size() / 4);
  std::uint64_t at = 0;
  DocId largest = 0;
  bool any = false;
  while (at < bytes.size()) {
    if (bytes.size() - at < 4)
      throw InputError(Location::at_offset(name, at),
                       fmt::format("truncated: {} stray bytes where list {}'s length (4 bytes) was expected",
                                   bytes.size() - at, index.terms()));
    const auto length = load<std::uint32_t>(bytes.data() + at);
    at += 4;
    if (length > (bytes.size() - at) / 4)
      throw InputError(Location::at_offset(name, at - 4),
                       fmt::format("truncated: list {} says {} ids, the file holds only {} more bytes",
                                   index.terms(), length, bytes.size() - at));
    const std::size_t first = index.ids.size();
    index.ids.resize(first + length);
    std::memcpy(index.ids.data() + first, bytes.data() + at, std::size_t{length} * 4);
    const std::span<const DocId> list(index.ids.data() + first, length);
    check_list(list, ~std::uint64_t{0}, name, at, index.terms());
    if (length > 0) largest = std::max(largest, list.back()), any = true;
    at += std::uint64_t{length} * 4;
    index.offsets.push_back(index.ids.size());
  }
  index.documents = any ? std::uint64_t{largest} + 1 : 0;
  add_bitmaps(index);
  return index;
}

Index parse_index(std::string_view bytes, const std::string& name) {
  const char* base = bytes.data();
  const std::uint64_t size = bytes.size();
  if (size < header_bytes(1) + 8) throw InputError(Location::at_offset(name, size), "truncated: shorter than an .skp header");
  if (std::memcmp(base, kMagic, 8) != 0) throw InputError(Location::at_offset(name, 0), "not an .skp index (wrong magic)");
  const auto version = load<std::uint32_t>(base + 8);
  if (version < 1 || version > kVersion)
    throw InputError(Location::at_offset(name, 8),
                     fmt::format(".skp version {} is not supported (this simkit reads versions 1 to {})", version,
                                 kVersion));
  if (load<std::uint32_t>(base + 12) != header_bytes(version))
    throw InputError(Location::at_offset(name, 12), "corrupt header: wrong header size");
  if (size < header_bytes(version) + 8)
    throw InputError(Location::at_offset(name, size), "truncated: shorter than an .skp header");
  if (const auto stated = load<std::uint64_t>(base + 56); stated > size)
    throw InputError(Location::at_offset(name, size),
                     fmt::format("truncated: the header says {} bytes, the file has {}", stated, size));
  const auto terms = load<std::uint64_t>(base + 16);
  const auto ids = load<std::uint64_t>(base + 24);
  const auto documents = load<std::uint64_t>(base + 32);
  const auto words = load<std::uint64_t>(base + 40);
  const auto word_bytes = load<std::uint64_t>(base + 48);
  const auto bitmaps = version == 1 ? 0 : load<std::uint64_t>(base + 64);
  const std::uint64_t stride = (documents + 63) / 64;
  if (terms >= size / 8 || ids > size / 4 || word_bytes > size || (words != 0 && words != terms) ||
      documents > (std::uint64_t{1} << 32))
    throw InputError(Location::at_offset(name, 16),
                     fmt::format("header says {} terms, {} ids, {} documents, {} words of {} bytes: "
                                 "more than the {}-byte file can hold, or inconsistent",
                                 terms, ids, documents, words, word_bytes, size));
  if (bitmaps > terms || (stride != 0 && bitmaps > size / 8 / stride))
    throw InputError(Location::at_offset(name, 64),
                     fmt::format("header says {} bitmaps ({} words each): more than its {} terms, or than the {}-byte "
                                 "file can hold",
                                 bitmaps, stride, terms, size));
  const Layout l = layout(version, terms, ids, bitmaps * stride, bitmaps, words, word_bytes);
  if (load<std::uint64_t>(base + 56) != l.file_size || size != l.file_size)
    throw InputError(Location::at_offset(name, std::min(size, l.file_size)),
                     fmt::format("{}: the sizes call for {} bytes, the file has {}",
                                 size < l.file_size ? "truncated" : "corrupt or trailing bytes", l.file_size, size));
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // (Fuzzers cannot forge checksums; they skip this to reach the checks below.)
  simkit::detail::check_checksum(base, l.checksum, version >= 3, name);
#endif
  Index index;
  index.documents = documents;
  index.offsets.resize(terms + 1);
  std::memcpy(index.offsets.data(), base + l.offsets, (terms + 1) * 8);
  index.ids.resize(ids);
  std::memcpy(index.ids.data(), base + l.ids, ids * 4);
  if (index.offsets[0] != 0 || index.offsets[terms] != ids)
    throw InputError(Location::at_offset(name, l.offsets), "corrupt list offsets");
  for (std::uint64_t t = 0; t < terms; ++t) {
    if (index.offsets[t + 1] < index.offsets[t] || index.offsets[t + 1] > ids)
      throw InputError(Location::at_offset(name, l.offsets + 8 * (t + 1)), "corrupt list offsets (not increasing)");
    check_list(index.list(t), documents, name, l.ids + 4 * index.offsets[t], t);
  }
  if (version == 1 || bitmaps == 0) {  // (an index written without them gets them here)
    add_bitmaps(index);
  } else {
    index.bitmap_terms.resize(bitmaps);
    std::memcpy(index.bitmap_terms.data(), base + l.bitmap_terms, bitmaps * 4);
    index.bitmap_words.resize(bitmaps * stride);
    std::memcpy(index.bitmap_words.data(), base + l.bitmap_words, bitmaps * stride * 8);
    check_bitmaps(index, name, l);
  }
  if (words > 0) {
    std::vector<std::uint64_t> word_offsets(words + 1);
    std::memcpy(word_offsets.data(), base + l.word_offsets, (words + 1) * 8);
    if (word_offsets[0] != 0 || word_offsets[words] != word_bytes)
      throw InputError(Location::at_offset(name, l.word_offsets), "corrupt word offsets");
    index.vocabulary.reserve(words);
    for (std::uint64_t w = 0; w < words; ++w) {
      const Location where = Location::at_offset(name, l.word_offsets + 8 * (w + 1));
      if (word_offsets[w + 1] <= word_offsets[w] || word_offsets[w + 1] > word_bytes)
        throw InputError(where, "corrupt word offsets (empty word or not increasing)");
      const std::string_view word(base + l.words + word_offsets[w], word_offsets[w + 1] - word_offsets[w]);
      if (first_invalid_utf8(word) != std::string_view::npos)
        throw InputError(Location::at_offset(name, l.words + word_offsets[w]), "word is not valid UTF-8");
      if (w > 0 && !(index.vocabulary.back() < word))
        throw InputError(Location::at_offset(name, l.words + word_offsets[w]),
                         "vocabulary out of order or a duplicate word");
      index.vocabulary.emplace_back(word);
    }
  }
  return index;
}

void write_index(const Index& index, const std::string& path) {
  const std::uint64_t terms = index.terms(), ids = index.ids.size();
  const std::uint64_t words = index.vocabulary.size();
  if (words != 0 && words != terms) throw Failure("write_index: the vocabulary must name every term");
  std::vector<std::uint64_t> word_offsets{0};
  for (const std::string& w : index.vocabulary) word_offsets.push_back(word_offsets.back() + w.size());
  if (index.first_document != 0) throw Failure("write_index: a shard (documents_between) cannot be written");
  const std::uint64_t bitmaps = index.bitmap_terms.size();
  if (index.bitmap_words.size() != bitmaps * index.bitmap_stride())
    throw Failure("write_index: the bitmaps do not match the documents");
  const Layout l = layout(kVersion, terms, ids, index.bitmap_words.size(), bitmaps, words, word_offsets.back());
  char header[128] = {};
  std::memcpy(header, kMagic, 8);
  const std::uint32_t fields32[] = {kVersion, header_bytes(kVersion)};
  std::memcpy(header + 8, fields32, sizeof fields32);
  const std::uint64_t fields64[] = {terms, ids, index.documents, words, word_offsets.back(), l.file_size, bitmaps};
  std::memcpy(header + 16, fields64, sizeof fields64);
  OutputFile out(path);
  simkit::detail::HashingWriter w(out, simkit::detail::kChecksumPiece);
  w.write(header, sizeof header);
  w.write(index.offsets.data(), (terms + 1) * 8);
  w.pad_to(l.ids);
  w.write(index.ids.data(), ids * 4);
  w.pad_to(l.bitmap_terms);
  w.write(index.bitmap_terms.data(), bitmaps * 4);
  w.pad_to(l.bitmap_words);
  w.write(index.bitmap_words.data(), index.bitmap_words.size() * 8);
  w.pad_to(l.word_offsets);
  if (words > 0) w.write(word_offsets.data(), (words + 1) * 8);
  w.pad_to(l.words);
  for (const std::string& word : index.vocabulary) w.write(word.data(), word.size());
  w.pad_to(l.checksum);
  w.finish();
  out.commit();
}

Index read_exp_index(const std::string& path) {
  const MappedFile file = MappedFile::open(path);
  return parse_exp_index(file.text(), path);
}

Index read_index(const std::string& path) {
  const MappedFile file = MappedFile::open(path);
  return parse_index(file.text(), path);
}

Index read_any_index(const std::string& path) {
  const MappedFile file = MappedFile::open(path);
  if (file.size() >= 8 && std::memcmp(file.data(), kMagic, 8) == 0) return parse_index(file.text(), path);
  return parse_exp_index(file.text(), path);
}

}  // namespace simkit::postings
