// simkit's DISCO model file (.skd), version 4 (all integers little-endian, sections on
// 64-byte boundaries; version 3 is the same with one XXH3-64 of every byte as its
// checksum, version 2 also without the measure section (a Lin model), and version 1
// without the dense section too; all are read):
//   header (64 bytes): "SIMKITDS", u32 version, u32 header bytes, u32 window, u32 flags
//                      (bit 0: words kept in their case),
//                      u64 words, u64 feature words, u64 features, u64 word bytes, u64 file size
//   word offsets  (words + 1) uint64 into the word bytes
//   words         the words, UTF-8, back to back
//   counts        words uint64
//   offsets       (words + 1) uint64 into features
//   features      uint32, ascending within a word, each < feature words x relations
//                 (relations: 2 (window - 1) for Lin, 1 for PPMI)
//   mi            float32 weights (MI or PPMI), each finite and > 0
//   dense width   uint64 F (0: no dense form)
//   dense columns F uint32 feature ids, distinct
//   dense         words x F float32, row-major, each finite and >= 0
//   measure       u32 measure (0 Lin, 1 PPMI), u32 distance weighting (0 or 1),
//                 f64 alpha, f64 shift k, f64 subsampling threshold (0: none)
//   checksum      uint64 of every byte before it: detail::piece_checksum's (the XXH3-64
//                 of its 64 MiB pieces' XXH3-64s)
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/binary_io.hpp"
#include "text/utf8.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"

namespace simkit::disco {

namespace {

using detail::align64;
using detail::load;

constexpr char kMagic[8] = {'S', 'I', 'M', 'K', 'I', 'T', 'D', 'S'};
constexpr std::uint32_t kVersion = 4;  // 4: the checksum in pieces
constexpr std::uint64_t kMeasureBytes = 32;
constexpr std::uint32_t kHeaderBytes = 64;

struct Layout {
  std::uint64_t word_offsets, words, counts, offsets, features, mi, dense_width, dense_columns, dense, measure,
      checksum, file_size;
};

// Where each section starts; version 1 has no dense section (dense_width unused), versions
// 1 and 2 no measure section.
Layout layout(std::uint32_t version, std::uint64_t words, std::uint64_t features, std::uint64_t word_bytes,
              std::uint64_t dense_width) {
  Layout l{};
  l.word_offsets = kHeaderBytes;
  l.words = align64(l.word_offsets + (words + 1) * 8);
  l.counts = align64(l.words + word_bytes);
  l.offsets = align64(l.counts + words * 8);
  l.features = align64(l.offsets + (words + 1) * 8);
  l.mi = align64(l.features + features * 4);
  std::uint64_t end = l.mi + features * 4;
  if (version >= 2) {
    l.dense_width = align64(end);
    l.dense_columns = align64(l.dense_width + 8);
    l.dense = align64(l.dense_columns + dense_width * 4);
    end = l.dense + words * dense_width * 4;
  }
  if (version >= 3) {
    l.measure = align64(end);
    end = l.measure + kMeasureBytes;
  }
  l.checksum = (end + 7) / 8 * 8;
  l.file_size = l.checksum + 8;
  return l;
}

template <typename T>
std::vector<T> copy_out(const char* base, std::uint64_t at, std::uint64_t n) {
  std::vector<T> v(n);
  if (n > 0) std::memcpy(v.data(), base + at, n * sizeof(T));
  return v;
}

}  // namespace

void write_model(const Model& m, const std::string& path) {
  std::vector<std::uint64_t> word_offsets{0};
  for (const std::string& w : m.words) word_offsets.push_back(word_offsets.back() + w.size());
  const std::uint64_t width = m.dense_features.size();
  if (m.dense.size() != m.words.size() * width) throw Failure("a model's dense form does not match its size");
  const Layout l = layout(kVersion, m.words.size(), m.features.size(), word_offsets.back(), width);
  char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, 8);
  const std::uint32_t fields32[] = {kVersion, kHeaderBytes, static_cast<std::uint32_t>(m.window), m.keep_case ? 1u : 0u};
  std::memcpy(header + 8, fields32, sizeof fields32);
  const std::uint64_t fields64[] = {m.words.size(), m.feature_words, m.features.size(), word_offsets.back(), l.file_size};
  std::memcpy(header + 24, fields64, sizeof fields64);
  OutputFile out(path);
  detail::HashingWriter w(out, detail::kChecksumPiece);
  w.write(header, sizeof header);
  w.write(word_offsets.data(), word_offsets.size() * 8);
  w.pad_to(l.words);
  for (const std::string& word : m.words) w.write(word.data(), word.size());
  w.pad_to(l.counts);
  w.write(m.counts.data(), m.counts.size() * 8);
  w.pad_to(l.offsets);
  w.write(m.offsets.data(), m.offsets.size() * 8);
  w.pad_to(l.features);
  w.write(m.features.data(), m.features.size() * 4);
  w.pad_to(l.mi);
  w.write(m.mi.data(), m.mi.size() * 4);
  w.pad_to(l.dense_width);
  w.write(&width, 8);
  w.pad_to(l.dense_columns);
  w.write(m.dense_features.data(), width * 4);
  w.pad_to(l.dense);
  w.write(m.dense.data(), m.dense.size() * 4);
  w.pad_to(l.measure);
  const std::uint32_t measure[2] = {m.measure == Measure::ppmi ? 1u : 0u, m.ppmi.weighted ? 1u : 0u};
  const double parameters[3] = {m.ppmi.alpha, m.ppmi.shift, m.subsample};
  w.write(measure, sizeof measure);
  w.write(parameters, sizeof parameters);
  w.pad_to(l.checksum);
  w.finish();
  out.commit();
}

Model parse_model(std::string_view bytes, const std::string& name) {
  const char* base = bytes.data();
  const std::uint64_t size = bytes.size();
  if (size < kHeaderBytes + 8) throw InputError(Location::at_offset(name, size), "truncated: shorter than an .skd header");
  if (std::memcmp(base, kMagic, 8) != 0) throw InputError(Location::at_offset(name, 0), "not an .skd model (wrong magic)");
  const auto version = load<std::uint32_t>(base + 8);
  if (version < 1 || version > kVersion)
    throw InputError(Location::at_offset(name, 8),
                     fmt::format(".skd version {} is not supported (this simkit reads versions 1 to {})", version,
                                 kVersion));
  if (load<std::uint32_t>(base + 12) != kHeaderBytes)
    throw InputError(Location::at_offset(name, 12), "corrupt header: wrong header size");
  if (const auto stated = load<std::uint64_t>(base + 56); stated > size)
    throw InputError(Location::at_offset(name, size),
                     fmt::format("truncated: the header says {} bytes, the file has {}", stated, size));
  const auto window = load<std::uint32_t>(base + 16);
  const auto flags = load<std::uint32_t>(base + 20);
  const auto words = load<std::uint64_t>(base + 24);
  const auto feature_words = load<std::uint64_t>(base + 32);
  const auto features = load<std::uint64_t>(base + 40);
  const auto word_bytes = load<std::uint64_t>(base + 48);
  if (flags > 1) throw InputError(Location::at_offset(name, 20), "corrupt header: unknown flags");
  if (window < 2 || window > 64 || words >= size / 8 || features > size / 8 || word_bytes > size ||
      feature_words > 0xFFFFFFFFull / (2 * (window - 1)) || words > feature_words)
    throw InputError(Location::at_offset(name, 16), "corrupt header: sizes the file cannot hold or out of range");
  // Version 2's dense width sits after the MI values; read it where the sizes so far put it.
  // Its bound is the widest feature space (Lin's); the measure's own bound comes below.
  std::uint64_t dense_width = 0;
  if (version >= 2) {
    const Layout before = layout(version, words, features, word_bytes, 0);
    if (before.dense_width + 8 > size)
      throw InputError(Location::at_offset(name, size), "truncated: the file ends before its dense section");
    dense_width = load<std::uint64_t>(base + before.dense_width);
    if (dense_width > feature_words * (2 * (window - 1)) || (words > 0 && dense_width > size / 4 / words))
      throw InputError(Location::at_offset(name, before.dense_width), "corrupt dense width (out of range)");
  }
  const Layout l = layout(version, words, features, word_bytes, dense_width);
  if (load<std::uint64_t>(base + 56) != l.file_size || size != l.file_size)
    throw InputError(Location::at_offset(name, std::min(size, l.file_size)),
                     fmt::format("corrupt: the sizes call for {} bytes, the file has {}", l.file_size, size));
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  detail::check_checksum(base, l.checksum, version >= 4, name);
#endif
  Model m;
  if (version >= 3) {
    const auto measure = load<std::uint32_t>(base + l.measure), weighted = load<std::uint32_t>(base + l.measure + 4);
    m.ppmi.alpha = load<double>(base + l.measure + 8);
    m.ppmi.shift = load<double>(base + l.measure + 16);
    m.subsample = load<double>(base + l.measure + 24);
    if (measure > 1 || weighted > 1 || !(m.ppmi.alpha > 0 && m.ppmi.alpha <= 1) ||
        !(m.ppmi.shift >= 1 && std::isfinite(m.ppmi.shift)) || !(m.subsample >= 0 && m.subsample < 1))
      throw InputError(Location::at_offset(name, l.measure), "corrupt measure section (unknown measure or parameters out of range)");
    m.measure = measure == 1 ? Measure::ppmi : Measure::lin;
    m.ppmi.weighted = weighted == 1;
  }
  m.window = static_cast<int>(window);
  m.keep_case = flags == 1;
  m.feature_words = feature_words;
  const std::uint64_t limit = feature_words * static_cast<std::uint64_t>(m.relations());
  const auto word_offsets = copy_out<std::uint64_t>(base, l.word_offsets, words + 1);
  if (word_offsets[0] != 0 || word_offsets[words] != word_bytes)
    throw InputError(Location::at_offset(name, l.word_offsets), "corrupt word offsets");
  for (std::uint64_t i = 0; i < words; ++i) {
    if (word_offsets[i + 1] <= word_offsets[i] || word_offsets[i + 1] > word_bytes)
      throw InputError(Location::at_offset(name, l.word_offsets + 8 * (i + 1)), "corrupt word offsets");
    const std::string_view word(base + l.words + word_offsets[i], word_offsets[i + 1] - word_offsets[i]);
    if (first_invalid_utf8(word) != std::string_view::npos)
      throw InputError(Location::at_offset(name, l.words + word_offsets[i]), "word is not valid UTF-8");
    m.words.emplace_back(word);
  }
  m.counts = copy_out<std::uint64_t>(base, l.counts, words);
  m.offsets = copy_out<std::uint64_t>(base, l.offsets, words + 1);
  m.features = copy_out<std::uint32_t>(base, l.features, features);
  m.mi = copy_out<float>(base, l.mi, features);
  if (m.offsets[0] != 0 || m.offsets[words] != features)
    throw InputError(Location::at_offset(name, l.offsets), "corrupt feature offsets");
  for (std::uint64_t i = 0; i < words; ++i) {
    if (m.offsets[i + 1] < m.offsets[i] || m.offsets[i + 1] > features)
      throw InputError(Location::at_offset(name, l.offsets + 8 * (i + 1)), "corrupt feature offsets");
    for (std::uint64_t f = m.offsets[i]; f < m.offsets[i + 1]; ++f) {
      if (m.features[f] >= limit || (f > m.offsets[i] && m.features[f] <= m.features[f - 1]))
        throw InputError(Location::at_offset(name, l.features + 4 * f), "corrupt feature id (out of range or order)");
      if (!std::isfinite(m.mi[f]) || !(m.mi[f] > 0))
        throw InputError(Location::at_offset(name, l.mi + 4 * f), "corrupt MI value (not finite and positive)");
    }
  }
  compute_sums(m);
  if (dense_width > 0) {
    m.dense_features = copy_out<std::uint32_t>(base, l.dense_columns, dense_width);
    std::vector<std::uint32_t> sorted = m.dense_features;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.back() >= limit || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw InputError(Location::at_offset(name, l.dense_columns), "corrupt dense columns (out of range or repeated)");
    m.dense = copy_out<float>(base, l.dense, words * dense_width);
    for (std::uint64_t i = 0; i < m.dense.size(); ++i)
      if (!std::isfinite(m.dense[i]) || m.dense[i] < 0)
        throw InputError(Location::at_offset(name, l.dense + 4 * i), "corrupt dense MI value (not finite and >= 0)");
  }
  return m;
}

Model read_model(const std::string& path) {
  const MappedFile file = MappedFile::open(path);
  return parse_model(file.text(), path);
}

}  // namespace simkit::disco
