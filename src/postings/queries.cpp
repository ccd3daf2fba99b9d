// Query batches: the seed's ExpQuery text (term ids a line) or words looked up in an
// index's vocabulary.
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "text/lines.hpp"
#include "text/utf8.hpp"
#include "postings/lists.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/tokenize.hpp"

namespace simkit::postings {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

void add_ids(std::string_view line, const Location& line_start, const Index& index, Queries& queries) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (blank(line[i])) { ++i; continue; }
    std::size_t end = i;
    while (end < line.size() && !blank(line[end])) ++end;
    Location where = line_start;
    where.column = i + 1;
    std::uint64_t term = 0;
    const auto [stop, error] = std::from_chars(line.data() + i, line.data() + end, term);
    if (error != std::errc{} || stop != line.data() + end)
      throw InputError(where, fmt::format("expected a term id (a non-negative integer), found {}",
                                          quote(line.substr(i, end - i))));
    if (term >= index.terms())
      throw InputError(where, fmt::format("term id {} is out of range: the index has {} terms (0..{})", term,
                                          index.terms(), index.terms() == 0 ? 0 : index.terms() - 1));
    queries.terms.push_back(static_cast<std::uint32_t>(term));
    i = end;
  }
}

}  // namespace

Queries parse_queries(std::string_view text, const std::string& name, const Index& index, bool words,
                      bool keep_case) {
  if (words && index.vocabulary.empty())
    throw UsageError("queries of words need an index with a vocabulary (simkit postings build); an ExpIndex "
                     "has term ids only");
  Queries queries;
  std::optional<Tokenizer> tokenizer;  // ICU's segmentation, for queries of words only
  if (words) tokenizer.emplace(!keep_case);
  std::vector<std::string> found;
  for_each_line(text, [&](std::string_view line, std::uint64_t line_no) {
    const Location where = Location::at_line(name, line_no);
    if (words) {
      if (const std::size_t bad = first_invalid_utf8(line); bad != std::string_view::npos)
        throw InputError(Location::at_line(name, line_no, bad + 1), "not valid UTF-8");
      tokenizer->split(line, found);
      for (const std::string& word : found) {
        const std::int64_t term = index.find(word);
        queries.terms.push_back(term < 0 ? kNoTerm : static_cast<std::uint32_t>(term));
      }
    } else {
      add_ids(line, where, index, queries);
    }
    if (queries.terms.size() == queries.offsets.back())
      throw InputError(where, words ? "expected a query (words), found a line without words"
                                    : "expected a query (term ids separated by blanks), found an empty line");
    queries.offsets.push_back(queries.terms.size());
  });
  return queries;
}

Queries read_queries(const std::string& path, const Index& index, bool words, bool keep_case) {
  const MappedFile file = MappedFile::open(path);
  return parse_queries(file.text(), path, index, words, keep_case);
}

}  // namespace simkit::postings
