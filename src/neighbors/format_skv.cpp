// simkit's own word-vector file (.skv), version 2, used in place from a memory map:
//
//   header (128 bytes): "SIMKITWV", u32 version, u32 header bytes, u64 rows, dim,
//                       word bytes, the offsets of the five sections, file size
//   vectors   rows x dim float32      (each section starts on a 64-byte boundary)
//   norms     rows float32
//   offsets   rows + 1 uint64 into the word bytes
//   words     the words back to back (UTF-8)
//   sorted    rows uint32: row numbers in byte order of their words
//   checksum  uint64 of every byte before it: XXH3-64 of the XXH3-64s of its 64 MiB
//             pieces (version 1, still read: XXH3-64 of all of them, one sequential pass)
//
// All integers little-endian. The layout follows from (rows, dim, word bytes) alone, so
// a reader recomputes it and refuses any header that disagrees.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <vector>

#include <fmt/format.h>

#include "core/binary_io.hpp"
#include "neighbors/model_data.hpp"
#include "neighbors/skv_layout.hpp"
#include "simkit/progress.hpp"

namespace simkit::neighbors::detail {

using simkit::detail::align64;
using simkit::detail::HashingWriter;
using simkit::detail::load;

SkvLayout skv_layout(std::uint64_t rows, std::uint64_t dim, std::uint64_t word_bytes) {
  SkvLayout l;
  l.vectors = align64(kSkvHeaderBytes);
  l.norms = align64(l.vectors + rows * dim * 4);
  l.offsets = align64(l.norms + rows * 4);
  l.words = align64(l.offsets + (rows + 1) * 8);
  l.sorted = align64(l.words + word_bytes);
  l.checksum = (l.sorted + rows * 4 + 7) / 8 * 8;
  l.file_size = l.checksum + 8;
  return l;
}

Model read_skv(const MappedFile& file, Progress* progress, bool background) {
  const std::string& path = file.path();
  const char* base = file.data();
  const std::size_t size = file.size();
  if (size < kSkvHeaderBytes + 8)
    throw InputError(Location::at_offset(path, size), "truncated: shorter than an .skv header");
  if (std::memcmp(base, "SIMKITWV", 8) != 0)
    throw InputError(Location::at_offset(path, 0), "not an .skv file (wrong magic)");
  const auto version = load<std::uint32_t>(base + 8);
  if (version != 1 && version != kSkvVersion)
    throw InputError(Location::at_offset(path, 8),
                     fmt::format(".skv version {} is not supported (this simkit reads versions 1 and {})",
                                 version, kSkvVersion));
  if (load<std::uint32_t>(base + 12) != kSkvHeaderBytes)
    throw InputError(Location::at_offset(path, 12), "corrupt header: wrong header size");
  const auto rows = load<std::uint64_t>(base + 16);
  const auto dim = load<std::uint64_t>(base + 24);
  const auto word_bytes = load<std::uint64_t>(base + 32);
  check_shape(rows, dim, Location::at_offset(path, 16));
  // Refuse sizes the file cannot hold before computing offsets from them.
  if (dim > size / 4 || rows > size / 4 / dim || word_bytes > size)
    throw InputError(Location::at_offset(path, 16),
                     fmt::format("header says {} rows x {} values and {} word bytes, more than "
                                 "the {}-byte file can hold: truncated or corrupt",
                                 rows, dim, word_bytes, size));
  const SkvLayout l = skv_layout(rows, dim, word_bytes);
  const std::uint64_t stored[] = {load<std::uint64_t>(base + 40), load<std::uint64_t>(base + 48),
                                  load<std::uint64_t>(base + 56), load<std::uint64_t>(base + 64),
                                  load<std::uint64_t>(base + 72)};
  const std::uint64_t expected[] = {l.vectors, l.norms, l.offsets, l.words, l.sorted};
  for (int i = 0; i < 5; ++i)
    if (stored[i] != expected[i])
      throw InputError(Location::at_offset(path, 40 + 8 * i), "corrupt header: section offsets "
                                                              "disagree with the sizes");
  const auto file_size = load<std::uint64_t>(base + 80);
  if (file_size != l.file_size)
    throw InputError(Location::at_offset(path, 80), "corrupt header: wrong file size");
  if (size != l.file_size)
    throw InputError(Location::at_offset(path, std::min<std::uint64_t>(size, l.file_size)),
                     fmt::format("{}: the header says {} bytes, the file has {}",
                                 size < l.file_size ? "truncated" : "trailing bytes", l.file_size, size));
  Model model;
  model.rows = rows;
  model.dim = dim;
  model.format = Format::Skv;
  model.source = path;
  model.vectors = reinterpret_cast<const float*>(base + l.vectors);
  model.norms = reinterpret_cast<const float*>(base + l.norms);
  model.word_offsets = reinterpret_cast<const std::uint64_t*>(base + l.offsets);
  model.word_bytes = base + l.words;
  model.sorted = reinterpret_cast<const std::uint32_t*>(base + l.sorted);
  model.storage = std::make_shared<MappedFile>(file);

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // (Fuzzers cannot forge checksums; they skip this to reach the checks below.)
  // In the background it overlaps the checks below and whatever the caller does next (a
  // GPU upload, the first search); a version 2 file's pieces on every core.
  auto verify = [file, checksum_at = l.checksum, version] {
    simkit::detail::check_checksum(file.data(), checksum_at, version >= 2, file.path());
  };
  if (background)
    model.pending_check = std::async(std::launch::async, verify).share();
  else
    verify();
#else
  (void)background;
#endif
  if (progress) progress->advance(size);

  // Structure the checksum cannot vouch for in a forged file: offsets, words, index. A
  // damaged file is reported as damaged (the checksum's error, waited for when it runs in
  // the background) when the damage also breaks the structure.
  const RowLocator locate = [&](std::size_t row) {
    return Location::at_offset(path, l.offsets + 8 * row);
  };
  try {
    if (model.word_offsets[0] != 0 || model.word_offsets[rows] != word_bytes)
      throw InputError(Location::at_offset(path, l.offsets), "corrupt word offsets");
    // Row r's end offset is checked before its word is read; the rows in any order (the
    // lowest bad one is reported), since offsets[r] <= offsets[r + 1] <= word_bytes.
    check_rows(rows, [&](std::size_t r) {
      if (model.word_offsets[r + 1] < model.word_offsets[r] || model.word_offsets[r + 1] > word_bytes)
        throw InputError(locate(r + 1), "corrupt word offsets (not increasing)");
      check_word(model.word(r), locate, r);
      if (!(model.norms[r] >= 0) || !std::isfinite(model.norms[r]))
        throw InputError(Location::at_offset(path, l.norms + 4 * r), "corrupt norm");
    });
    // Strictly increasing words also make the rows distinct, so the index is a permutation.
    check_rows(rows, [&](std::size_t i) {
      const std::uint32_t row = model.sorted[i];
      if (row >= rows || (i > 0 && model.sorted[i - 1] >= rows))
        throw InputError(Location::at_offset(path, l.sorted + 4 * i), "corrupt sorted index");
      if (i > 0 && model.sorted[i - 1] == row)
        throw InputError(Location::at_offset(path, l.sorted + 4 * i), "corrupt sorted index (a row listed twice)");
      if (i > 0 && !(model.word(model.sorted[i - 1]) < model.word(row)))
        throw InputError(Location::at_offset(path, l.sorted + 4 * i),
                         "sorted index out of order or duplicate word");
    });
  } catch (const InputError&) {
    model.wait_checked();
    throw;
  }
  return model;
}

void write_skv(const Model& model, OutputFile& out, Progress* progress) {
  const std::uint64_t rows = model.rows, dim = model.dim;
  const std::uint64_t word_bytes = model.word_offsets[rows];
  const SkvLayout l = skv_layout(rows, dim, word_bytes);
  char header[kSkvHeaderBytes] = {};
  std::memcpy(header, "SIMKITWV", 8);
  const std::uint32_t fields32[] = {kSkvVersion, kSkvHeaderBytes};
  std::memcpy(header + 8, fields32, sizeof fields32);
  const std::uint64_t fields64[] = {rows,      dim,       word_bytes, l.vectors,  l.norms,
                                    l.offsets, l.words,   l.sorted,   l.file_size};
  std::memcpy(header + 16, fields64, sizeof fields64);

  HashingWriter w(out, simkit::detail::kChecksumPiece);
  w.write(header, sizeof header);
  w.pad_to(l.vectors);
  const std::uint64_t vector_bytes = rows * dim * 4;
  constexpr std::uint64_t kPiece = 64u << 20;
  for (std::uint64_t at = 0; at < vector_bytes; at += kPiece) {
    const std::uint64_t n = std::min(kPiece, vector_bytes - at);
    w.write(reinterpret_cast<const char*>(model.vectors) + at, n);
    if (progress) progress->advance(n);
  }
  w.pad_to(l.norms);
  w.write(model.norms, rows * 4);
  w.pad_to(l.offsets);
  w.write(model.word_offsets, (rows + 1) * 8);
  w.pad_to(l.words);
  w.write(model.word_bytes, word_bytes);
  w.pad_to(l.sorted);
  w.write(model.sorted, rows * 4);
  w.pad_to(l.checksum);
  w.finish();
}

}  // namespace simkit::neighbors::detail
