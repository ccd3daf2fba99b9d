// simkit's two LVQ files (all integers little-endian, sections on 64-byte boundaries,
// an XXH3-64 checksum of every byte before it at the end):
//   .skl data set (version 1)
//     header (64 bytes): "SIMKITLD", u32 version, u32 header bytes, u64 rows, u64 dims,
//                        u64 classes, u64 name bytes, u32 flags (bit 0: labelled), u32 0,
//                        u64 file size
//     name offsets (classes + 1) uint64, names (UTF-8), labels rows uint32 (if labelled),
//     features rows x dims float32
//   .skq model (version 1)
//     header (64 bytes): "SIMKITLQ", u32 version, u32 header bytes, u64 prototypes a class,
//                        u64 dims, u64 classes, u64 name bytes, u32 flags (bit 0:
//                        standardised), u32 0, u64 file size
//     name offsets, names, [mean dims float32, scale dims float32], prototypes
//     (classes x per class) x dims float32
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/binary_io.hpp"
#include "text/utf8.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/lvq.hpp"

namespace simkit::lvq {

namespace {

using detail::align64;
using detail::load;

constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kHeaderBytes = 64;

// The header both files share: magic, version, four sizes, flags, file size.
struct Header {
  std::uint64_t first = 0, dims = 0, classes = 0, name_bytes = 0;  // first: rows or prototypes a class
  std::uint32_t flags = 0;
};

struct Sections {
  std::uint64_t name_offsets, names, body;
};
Sections sections(const Header& h) {
  Sections s{};
  s.name_offsets = kHeaderBytes;
  s.names = align64(s.name_offsets + (h.classes + 1) * 8);
  s.body = align64(s.names + h.name_bytes);
  return s;
}

std::uint64_t name_bytes(const std::vector<std::string>& classes) {
  std::uint64_t n = 0;
  for (const std::string& c : classes) n += c.size();
  return n;
}

// Writes header and names; the caller writes the body from sections().body on.
void write_head(detail::HashingWriter& w, const char* magic, const Header& h, std::uint64_t file_size,
                const std::vector<std::string>& classes) {
  char header[kHeaderBytes] = {};
  std::memcpy(header, magic, 8);
  const std::uint32_t v32[] = {kVersion, kHeaderBytes};
  std::memcpy(header + 8, v32, sizeof v32);
  const std::uint64_t v64[] = {h.first, h.dims, h.classes, h.name_bytes};
  std::memcpy(header + 16, v64, sizeof v64);
  std::memcpy(header + 48, &h.flags, 4);
  std::memcpy(header + 56, &file_size, 8);
  w.write(header, sizeof header);
  std::uint64_t offset = 0;
  w.write(&offset, 8);
  for (const std::string& c : classes) {
    offset += c.size();
    w.write(&offset, 8);
  }
  const Sections s = sections(h);
  w.pad_to(s.names);
  for (const std::string& c : classes) w.write(c.data(), c.size());
  w.pad_to(s.body);
}

// Checks magic, version, sizes against `body_bytes(header)` and the checksum; reads the
// class names. Returns the header.
template <typename BodyBytes>
Header read_head(std::string_view bytes, const std::string& name, const char* magic, const char* what,
                 BodyBytes body_bytes, std::vector<std::string>& classes) {
  const char* base = bytes.data();
  const std::uint64_t size = bytes.size();
  if (size < kHeaderBytes + 8)
    throw InputError(Location::at_offset(name, size), fmt::format("truncated: shorter than an {} header", what));
  if (std::memcmp(base, magic, 8) != 0)
    throw InputError(Location::at_offset(name, 0), fmt::format("not an {} file (wrong magic)", what));
  if (const auto version = load<std::uint32_t>(base + 8); version != kVersion)
    throw InputError(Location::at_offset(name, 8),
                     fmt::format("{} version {} is not supported (this simkit reads version {})", what, version, kVersion));
  if (load<std::uint32_t>(base + 12) != kHeaderBytes)
    throw InputError(Location::at_offset(name, 12), "corrupt header: wrong header size");
  Header h;
  h.first = load<std::uint64_t>(base + 16);
  h.dims = load<std::uint64_t>(base + 24);
  h.classes = load<std::uint64_t>(base + 32);
  h.name_bytes = load<std::uint64_t>(base + 40);
  h.flags = load<std::uint32_t>(base + 48);
  const auto stated = load<std::uint64_t>(base + 56);
  if (stated > size)
    throw InputError(Location::at_offset(name, size), fmt::format("truncated: the header says {} bytes, the file has {}", stated, size));
  if (h.flags > 1 || h.dims == 0 || h.dims > size || h.first > size || h.classes > size / 8 || h.name_bytes > size)
    throw InputError(Location::at_offset(name, 16), "corrupt header: sizes the file cannot hold or out of range");
  const Sections s = sections(h);
  const std::uint64_t body = body_bytes(h);
  const std::uint64_t checksum_at = (s.body + body + 7) / 8 * 8;
  if (body > size || stated != checksum_at + 8 || size != stated)
    throw InputError(Location::at_offset(name, std::min(size, checksum_at)),
                     fmt::format("corrupt: the sizes call for {} bytes, the file has {}", checksum_at + 8, size));
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  detail::check_checksum(base, checksum_at, false, name);
#endif
  classes.clear();
  std::uint64_t previous = load<std::uint64_t>(base + s.name_offsets);
  if (previous != 0) throw InputError(Location::at_offset(name, s.name_offsets), "corrupt class name offsets");
  for (std::uint64_t c = 0; c < h.classes; ++c) {
    const auto next = load<std::uint64_t>(base + s.name_offsets + 8 * (c + 1));
    if (next <= previous || next > h.name_bytes)
      throw InputError(Location::at_offset(name, s.name_offsets + 8 * (c + 1)), "corrupt class name offsets");
    const std::string_view label(base + s.names + previous, next - previous);
    if (first_invalid_utf8(label) != std::string_view::npos)
      throw InputError(Location::at_offset(name, s.names + previous), "class name is not valid UTF-8");
    if (!classes.empty() && sorted_classes({classes.back(), std::string(label)}).front() != classes.back())
      throw InputError(Location::at_offset(name, s.names + previous), "class names out of order");
    classes.emplace_back(label);
    previous = next;
  }
  if (previous != h.name_bytes) throw InputError(Location::at_offset(name, s.name_offsets), "corrupt class name offsets");
  return h;
}

template <typename T>
void copy_floats(std::vector<T>& out, const char* at, std::uint64_t n) {
  out.resize(n);
  if (n > 0) std::memcpy(out.data(), at, n * sizeof(T));
}

void check_finite(const std::vector<float>& values, const std::string& name, std::uint64_t at, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw InputError(Location::at_offset(name, at + 4 * i), fmt::format("corrupt {}: not a finite number", what));
}

// Sizes from an untrusted header, computed without overflow; anything past 2^62 bytes
// is more than any file holds.
__extension__ using U128 = unsigned __int128;
std::uint64_t capped(U128 v) { return v > (U128{1} << 62) ? std::uint64_t{1} << 62 : static_cast<std::uint64_t>(v); }

constexpr char kDataMagic[8] = {'S', 'I', 'M', 'K', 'I', 'T', 'L', 'D'};
constexpr char kModelMagic[8] = {'S', 'I', 'M', 'K', 'I', 'T', 'L', 'Q'};

}  // namespace

void write_dataset(const Dataset& d, const std::string& path) {
  const Header h{d.rows, d.dims, d.classes.size(), name_bytes(d.classes), d.labelled() ? 1u : 0u};
  const Sections s = sections(h);
  const std::uint64_t features_at = align64(s.body + (d.labelled() ? d.rows * 4 : 0));
  const std::uint64_t checksum_at = (features_at + d.features.size() * 4 + 7) / 8 * 8;
  OutputFile out(path);
  detail::HashingWriter w(out);
  write_head(w, kDataMagic, h, checksum_at + 8, d.classes);
  if (d.labelled()) w.write(d.labels.data(), d.rows * 4);
  w.pad_to(features_at);
  w.write(d.features.data(), d.features.size() * 4);
  w.pad_to(checksum_at);
  w.finish();
  out.commit();
}

Dataset parse_skl(std::string_view bytes, const std::string& name) {
  Dataset d;
  auto body = [](const Header& h) {
    return capped(align64(h.flags & 1 ? capped(h.first * U128{4}) : 0) + h.first * U128{h.dims} * 4);
  };
  const Header h = read_head(bytes, name, kDataMagic, ".skl", body, d.classes);
  const Sections s = sections(h);
  d.rows = h.first;
  d.dims = h.dims;
  const char* base = bytes.data();
  if (h.flags & 1) {
    copy_floats(d.labels, base + s.body, d.rows);
    for (std::size_t r = 0; r < d.rows; ++r)
      if (d.labels[r] >= d.classes.size())
        throw InputError(Location::at_offset(name, s.body + 4 * r), "corrupt label (past the class names)");
  }
  const std::uint64_t features_at = align64(s.body + (h.flags & 1 ? d.rows * 4 : 0));
  copy_floats(d.features, base + features_at, d.rows * d.dims);
  check_finite(d.features, name, features_at, "feature");
  return d;
}

void write_model(const Model& m, const std::string& path) {
  const bool standardised = !m.mean.empty();
  const Header h{m.per_class, m.dims, m.classes.size(), name_bytes(m.classes), standardised ? 1u : 0u};
  const Sections s = sections(h);
  const std::uint64_t checksum_at = (s.body + (standardised ? 2 * m.dims * 4 : 0) + m.prototypes.size() * 4 + 7) / 8 * 8;
  OutputFile out(path);
  detail::HashingWriter w(out);
  write_head(w, kModelMagic, h, checksum_at + 8, m.classes);
  if (standardised) {
    w.write(m.mean.data(), m.dims * 4);
    w.write(m.scale.data(), m.dims * 4);
  }
  w.write(m.prototypes.data(), m.prototypes.size() * 4);
  w.pad_to(checksum_at);
  w.finish();
  out.commit();
}

Model parse_model(std::string_view bytes, const std::string& name) {
  Model m;
  auto body = [](const Header& h) {
    return capped((h.flags & 1 ? 2 * U128{h.dims} * 4 : 0) + U128{h.classes} * h.first * h.dims * 4);
  };
  const Header h = read_head(bytes, name, kModelMagic, ".skq", body, m.classes);
  if (h.classes < 2 || h.first == 0)
    throw InputError(Location::at_offset(name, 16), "corrupt header: a model needs 2 classes and a prototype a class");
  m.per_class = h.first;
  m.dims = h.dims;
  std::uint64_t at = sections(h).body;
  const char* base = bytes.data();
  if (h.flags & 1) {
    copy_floats(m.mean, base + at, m.dims);
    check_finite(m.mean, name, at, "mean");
    at += m.dims * 4;
    copy_floats(m.scale, base + at, m.dims);
    check_finite(m.scale, name, at, "scale");
    for (std::size_t i = 0; i < m.dims; ++i)
      if (!(m.scale[i] > 0)) throw InputError(Location::at_offset(name, at + 4 * i), "corrupt scale: not positive");
    at += m.dims * 4;
  }
  copy_floats(m.prototypes, base + at, m.count() * m.dims);
  check_finite(m.prototypes, name, at, "prototype");
  return m;
}

Model read_model(const std::string& path) {
  const MappedFile file = MappedFile::open(path);
  return parse_model(file.text(), path);
}

}  // namespace simkit::lvq
