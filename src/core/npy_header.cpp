// The header of a NumPy .npy file: a Python dict literal, parsed by a small
// recursive-descent reader that accepts only what the format allows.
#include "core/npy_header.hpp"

#include <fmt/format.h>

#include "simkit/error.hpp"

namespace simkit::detail {

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

}  // namespace simkit::detail
