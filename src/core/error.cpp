#include "simkit/error.hpp"

#include <fmt/format.h>

#include "text/utf8.hpp"

namespace simkit {

Location Location::at_line(std::string file, std::uint64_t line, std::uint64_t column) {
  Location where;
  where.file = std::move(file);
  where.line = line;
  where.column = column;
  return where;
}

Location Location::at_offset(std::string file, std::uint64_t offset) {
  Location where;
  where.file = std::move(file);
  where.offset = offset;
  return where;
}

std::string to_string(const Location& where) {
  std::string out = where.file.empty() ? std::string() : where.file;
  if (where.line != 0) {
    out += fmt::format(":{}", where.line);
    if (where.column != 0) out += fmt::format(":{}", where.column);
  } else if (where.offset != Location::kUnknown) {
    out += fmt::format("{}byte {}", out.empty() ? "" : ": ", where.offset);
  }
  return out;
}

static std::string compose(const Location& where, const std::string& reason) {
  const std::string place = to_string(where);
  return one_line(place.empty() ? reason : place + ": " + reason);
}

InputError::InputError(Location where, const std::string& reason)
    : Error(compose(where, reason)), where_(std::move(where)), reason_(reason) {}

FileError::FileError(Location where, const std::string& reason, int error_number)
    : InputError(std::move(where), reason), error_number_(error_number) {}

std::string quote(std::string_view text, std::size_t max_bytes) {
  std::string out = "'";
  const std::size_t limit = std::min(text.size(), max_bytes);
  for (std::size_t i = 0; i < limit;) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (std::size_t n = c >= 0x80 ? utf8_sequence_length(text, i) : 0; n != 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
  out += '\'';
  if (text.size() > limit) out += "...";
  return out;
}

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return out;
}

}  // namespace simkit
