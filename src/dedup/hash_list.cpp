// ssdeep's list format, written by `simkit hash` and read by `simkit dedup` (see
// simkit/dedup.hpp): "blocksize:first:second" then ',"file"', one entry a line.
#include <algorithm>
#include <array>
#include <string>

#include <oneapi/tbb/parallel_for.h>

#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "text/lines.hpp"

namespace simkit::dedup {

namespace {

// (A table: a million entries' 90 million characters are checked.)
constexpr std::array<bool, 256> kBase64 = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c)
    table[c] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
  return table;
}();

bool is_base64(char c) { return kBase64[static_cast<unsigned char>(c)]; }

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
  std::string_view quoted = line.substr(i + 2, line.size() - i - 3);
  entry.file.reserve(quoted.size());
  for (std::size_t k; (k = quoted.find("\\\"")) != std::string_view::npos; quoted.remove_prefix(k + 2))
    entry.file.append(quoted.substr(0, k)) += '"';  // \" stands for "
  entry.file.append(quoted);
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
  // Pieces of the list parsed on all cores (a million entries are 90 MB), the earliest
  // error reported.
  constexpr std::size_t kChunkBytes = 1u << 20;
  const std::vector<LineChunk> chunks = line_chunks(text, kChunkBytes);
  std::vector<std::vector<HashEntry>> parts(chunks.size());
  FirstError first_error;
  tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t c) {
    try {
      for_each_line(chunks[c].of(text), [&](std::string_view line, std::uint64_t k) {
        const std::uint64_t number = chunks[c].first_line + k - 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (number == 1 || line.empty()) return;
        const auto fail = [&](std::size_t column, const std::string& what) {
          throw InputError(Location::at_line(name, number, column + 1), "expected " + what + " in an ssdeep hash line");
        };
        parts[c].push_back(parse_entry(line, fail));
      });
    } catch (const InputError& e) {
      first_error.offer(e);
    }
  });
  first_error.throw_if_any();
  std::vector<std::size_t> at(parts.size() + 1, 0);
  for (std::size_t c = 0; c < parts.size(); ++c) at[c + 1] = at[c] + parts[c].size();
  std::vector<HashEntry> entries(at.back());
  tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t c) {
    std::move(parts[c].begin(), parts[c].end(), entries.begin() + static_cast<std::ptrdiff_t>(at[c]));
  });
  return entries;
}

std::uint64_t estimated_entries(std::string_view text) {
  constexpr std::size_t kSample = 64u << 10;
  const std::size_t header_end = text.find('\n');
  if (!is_hash_list(text) || header_end == std::string_view::npos) return 0;
  const std::string_view body = text.substr(header_end + 1), sample = body.substr(0, kSample);
  if (sample.empty()) return 0;
  auto lines = static_cast<double>(std::count(sample.begin(), sample.end(), '\n'));
  if (sample.size() == body.size() && sample.back() != '\n') lines += 1;  // a last line without its newline
  return static_cast<std::uint64_t>(lines * static_cast<double>(body.size()) / static_cast<double>(sample.size()));
}

}  // namespace simkit::dedup
