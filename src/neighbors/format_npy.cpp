// NumPy .npy float matrices (N x D, '<f4' used in place, '<f8' converted) with the words
// in a separate file, one a line. The header is a Python dict literal, parsed here by a
// small recursive-descent reader that accepts only what the format allows.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "neighbors/model_data.hpp"
#include "neighbors/npy_header.hpp"
#include "simkit/progress.hpp"

namespace simkit::neighbors::detail {

static_assert(std::endian::native == std::endian::little, "simkit reads little-endian data");

namespace {

class DictReader {
 public:
  DictReader(std::string_view text, std::string path, std::size_t base)
      : text_(text), path_(std::move(path)), base_(base) {}

  NpyHeader parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = read_string();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (have_descr) fail("duplicate key 'descr'");
        header.descr = read_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_order) fail("duplicate key 'fortran_order'");
        header.fortran_order = read_bool();
        have_order = true;
      } else if (key == "shape") {
        if (have_shape) fail("duplicate key 'shape'");
        header.shape = read_shape();
        have_shape = true;
      } else {
        fail(fmt::format("unknown key {} (expected descr, fortran_order, shape)", quote(key)));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      break;
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dictionary");
    if (!have_descr || !have_order || !have_shape)
      fail("the header dictionary needs the keys descr, fortran_order and shape");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(Location::at_offset(path_, base_ + pos_), "npy header: " + why);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t'))
      ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string read_string() {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const std::size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos || end - pos_ > 64) fail("unterminated string");
    std::string out(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool read_bool() {
    if (text_.substr(pos_).starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_).starts_with("False")) {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::vector<std::uint64_t> read_shape() {
    expect('(');
    std::vector<std::uint64_t> dims;
    for (;;) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        return dims;
      }
      if (dims.size() == 8) fail("too many dimensions");
      std::uint64_t value = 0;
      std::size_t digits = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (++digits > 18) fail("dimension too large");
        value = value * 10 + static_cast<std::uint64_t>(peek() - '0');
        ++pos_;
      }
      if (digits == 0) fail("expected a dimension");
      dims.push_back(value);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(')');
      return dims;
    }
  }

  std::string_view text_;
  std::string path_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(std::string_view bytes, std::size_t at, std::size_t width) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < width; ++i)
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

}  // namespace

NpyHeader read_npy_header(std::string_view bytes, const std::string& path) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    throw InputError(Location::at_offset(path, 0), "not an .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3)
    throw InputError(Location::at_offset(path, 6),
                     fmt::format("npy format version {} is not supported (1, 2 or 3)", major));
  const std::size_t width = major == 1 ? 2 : 4;
  const std::size_t start = 8 + width;
  if (bytes.size() < start) throw InputError(Location::at_offset(path, 8), "truncated npy header");
  const std::size_t length = read_le(bytes, 8, width);
  if (length > bytes.size() - start)
    throw InputError(Location::at_offset(path, 8),
                     fmt::format("npy header length {} runs past the end of the file", length));
  NpyHeader header = DictReader(bytes.substr(start, length), path, start).parse();
  header.data_offset = start + length;
  return header;
}

Model read_npy(const MappedFile& file, const MappedFile* words, Progress* progress) {
  const std::string& path = file.path();
  const std::string_view bytes = file.text();
  const NpyHeader header = read_npy_header(bytes, path);
  const Location at_header = Location::at_offset(path, 8);
  std::size_t item = 0;
  if (header.descr == "<f4") item = 4;
  else if (header.descr == "<f8") item = 8;
  else
    throw InputError(at_header, fmt::format("dtype {} is not supported: expected float32 ('<f4') "
                                            "or float64 ('<f8')",
                                            quote(header.descr)));
  if (header.fortran_order)
    throw InputError(at_header, "Fortran-order arrays are not supported: save a C-order array "
                                "(numpy.ascontiguousarray)");
  if (header.shape.size() != 2)
    throw InputError(at_header, fmt::format("expected a 2-D matrix (words x dimensions), found {} "
                                            "dimension{}",
                                            header.shape.size(), header.shape.size() == 1 ? "" : "s"));
  const std::uint64_t rows = header.shape[0], dim = header.shape[1];
  check_shape(rows, dim, at_header);
  const std::uint64_t data_bytes = bytes.size() - header.data_offset;
  if (dim > data_bytes / item || rows > data_bytes / item / dim || rows * dim * item != data_bytes)
    throw InputError(Location::at_offset(path, header.data_offset),
                     fmt::format("shape ({}, {}) of {}-byte values does not match the {} bytes of "
                                 "data in the file (truncated or extra bytes)",
                                 rows, dim, item, data_bytes));
  if (words == nullptr)
    throw UsageError(fmt::format("{}: an .npy matrix needs its word list: add --words FILE", path));
  const std::string& words_path = words->path();

  auto data = std::make_shared<ModelData>();
  const char* raw = bytes.data() + header.data_offset;
  if (item == 4 && reinterpret_cast<std::uintptr_t>(raw) % alignof(float) == 0) {
    data->mapped = file;
    data->external_vectors = reinterpret_cast<const float*>(raw);
  } else {
    data->vectors.resize(rows * dim);
    for (std::size_t i = 0; i < rows * dim; ++i) {
      double v = 0;
      if (item == 8) std::memcpy(&v, raw + 8 * i, 8);
      else {
        float f = 0;
        std::memcpy(&f, raw + 4 * i, 4);
        v = f;
      }
      data->vectors[i] = static_cast<float>(v);
    }
  }
  const float* values = data->external_vectors ? data->external_vectors : data->vectors.data();
  for (std::size_t i = 0; i < rows * dim; ++i)
    if (!std::isfinite(values[i]))
      throw InputError(Location::at_offset(path, header.data_offset + i * item),
                       fmt::format("value {} of row {} is NaN, infinite or out of the float32 range",
                                   i % dim + 1, i / dim + 1));
  if (progress) progress->advance(bytes.size());

  // The word list: one word a line, as many lines as rows.
  std::string_view list = words->text();
  if (!list.empty() && list.back() == '\n') list.remove_suffix(1);
  data->offsets.reserve(rows + 1);
  data->offsets.push_back(0);
  std::size_t line = 0;
  for (std::size_t pos = 0; !list.empty() && pos <= list.size();) {
    std::size_t eol = list.find('\n', pos);
    if (eol == std::string_view::npos) eol = list.size();
    std::string_view word = list.substr(pos, eol - pos);
    if (!word.empty() && word.back() == '\r') word.remove_suffix(1);
    if (++line > rows)
      throw InputError(Location::at_line(words_path, line),
                       fmt::format("more words than the {} rows of {}", rows, path));
    data->words.append(word);
    data->offsets.push_back(data->words.size());
    pos = eol + 1;
  }
  if (line != rows)
    throw InputError(Location::at_line(words_path, line + 1),
                     fmt::format("{} words for the {} rows of {}", line, rows, path));
  return finish_model(std::move(data), rows, dim, Format::Npy, path,
                      [&](std::size_t row) { return Location::at_line(words_path, row + 1); });
}

}  // namespace simkit::neighbors::detail
