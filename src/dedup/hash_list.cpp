// ssdeep's list format, written by `simkit hash` and read by `simkit dedup` (see
// simkit/dedup.hpp): "blocksize:first:second" then ',"file"', one entry a line.
#include <string>

#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

namespace {

bool is_base64(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// Reads one entry; `fail(column, what)` throws at a column of the line.
template <typename Fail>
HashEntry parse_entry(std::string_view line, const Fail& fail) {
  std::size_t i = 0;
  const auto digits_from = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == digits_from) fail(i, "a block size (digits)");
  if (i - digits_from > 19) fail(digits_from, "a block size of at most 19 digits");
  for (int part = 0; part < 2; ++part) {
    if (i >= line.size() || line[i] != ':') fail(i, "':'");
    const std::size_t from = ++i;
    while (i < line.size() && is_base64(line[i])) ++i;
    if (i - from > ctph::kSignatureLength) fail(from, "a hash part of at most 64 base64 characters");
  }
  HashEntry entry{std::string(line.substr(0, i)), {}};
  if (i == line.size()) return entry;  // no file name: ssdeep accepts that
  if (line.substr(i, 2) != ",\"") fail(i, "',\"' and a file name, or the end of the line");
  if (line.back() != '"' || line.size() < i + 3) fail(line.size(), "'\"' closing the file name");
  const std::string_view quoted = line.substr(i + 2, line.size() - i - 3);
  for (std::size_t k = 0; k < quoted.size(); ++k) {
    if (quoted[k] == '\\' && k + 1 < quoted.size() && quoted[k + 1] == '"') ++k;
    entry.file += quoted[k];
  }
  return entry;
}

}  // namespace

std::string list_line(std::string_view signature, std::string_view file) {
  std::string line(signature);
  line += ",\"";
  for (const char c : file) {
    if (c == '"') line += '\\';
    line += c;
  }
  line += "\"\n";
  return line;
}

bool is_hash_list(std::string_view text) {
  const std::string_view header = kSsdeepHeader;
  return text.substr(0, header.size()) == header &&
         (text.size() == header.size() || text[header.size()] == '\n' || text[header.size()] == '\r');
}

std::vector<HashEntry> read_hash_list(std::string_view text, const std::string& name) {
  if (!is_hash_list(text)) throw InputError(Location::at_line(name, 1, 1), std::string("expected ssdeep's header line '") + kSsdeepHeader + "'");
  std::vector<HashEntry> entries;
  std::uint64_t number = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (number == 1 || line.empty()) continue;
    const auto fail = [&](std::size_t column, const std::string& what) {
      throw InputError(Location::at_line(name, number, column + 1), "expected " + what + " in an ssdeep hash line");
    };
    entries.push_back(parse_entry(line, fail));
  }
  return entries;
}

}  // namespace simkit::dedup
