// GloVe text (`word v1 ... vD` a line) and word2vec text (the same after an `N D` line).
//
// The file is cut into chunks at line ends; chunks count their lines in parallel, then
// parse in parallel knowing their first line number, so every error names its line and
// column. A word may contain spaces (the GloVe 840B file has such words): the last D
// fields are the values and everything before them is the word.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <oneapi/tbb/parallel_for.h>
#include <fmt/format.h>

#include "neighbors/model_data.hpp"
#include "text/lines.hpp"
#include "text/number_text.hpp"
#include "simkit/progress.hpp"

namespace simkit::neighbors::detail {

using simkit::detail::append_shortest;
using simkit::detail::describe;
using simkit::detail::NumberParse;
using simkit::detail::parse_float;

namespace {

constexpr std::size_t kChunkBytes = 8u << 20;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// A piece of the body and the words its rows hold.
struct Chunk {
  LineChunk lines;  // (line numbers within the body)
  std::size_t first_row = 0;
  std::string words;
  std::vector<std::uint32_t> word_lengths;
};

struct TextLayout {
  std::size_t header_lines = 0;  // lines before the first vector
  std::size_t body = 0;          // byte offset of the first vector line
  std::size_t rows = 0;          // from the header (word2vec), or 0 = count lines
  std::size_t dim = 0;
};

}  // namespace

// Splits a line into fields separated by runs of blanks; returns their count.
std::size_t split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    fields.push_back(line.substr(start, i - start));
  }
  return fields.size();
}

CountHeader read_count_header(std::string_view text, const std::string& path) {
  std::vector<std::string_view> fields;
  const std::size_t eol = text.find('\n');
  const Location where = Location::at_line(path, 1);
  if (split_fields(text.substr(0, std::min(eol, std::size_t{256})), fields) != 2)
    throw InputError(where, "expected a header line with two numbers: rows and dimension");
  std::uint64_t values[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    auto [end, err] = std::from_chars(fields[i].data(), fields[i].data() + fields[i].size(), values[i]);
    if (err != std::errc() || end != fields[i].data() + fields[i].size())
      throw InputError(where, fmt::format("header field {} is not a count", quote(fields[i])));
  }
  check_shape(values[0], values[1], where);
  return CountHeader{values[0], values[1], eol == std::string_view::npos ? text.size() : eol + 1};
}

namespace {

TextLayout read_layout(std::string_view text, Format format, const std::string& path) {
  TextLayout layout;
  std::vector<std::string_view> fields;
  if (format == Format::Word2VecText) {
    const CountHeader header = read_count_header(text, path);
    // Each value takes at least two bytes ("0 "): refuse headers the file cannot hold
    // before allocating anything.
    const std::uint64_t body_bytes = text.size() - header.body;
    if (header.dim > body_bytes / 2 || header.rows > body_bytes / (2 * header.dim))
      throw InputError(Location::at_line(path, 1),
                       fmt::format("header says {} rows of {} values but the file has only {} "
                                   "bytes after it",
                                   header.rows, header.dim, body_bytes));
    layout.header_lines = 1;
    layout.body = header.body;
    layout.rows = header.rows;
    layout.dim = header.dim;
    return layout;
  }
  const std::string_view first = text.substr(0, text.find('\n'));
  const std::size_t n = split_fields(first, fields);
  if (n < 2)
    throw InputError(Location::at_line(path, 1), "expected a word followed by its values");
  layout.dim = n - 1;
  check_shape(1, layout.dim, Location::at_line(path, 1));
  return layout;
}

// Parses the lines of one chunk into rows [first_row, first_row + rows).
void parse_chunk(std::string_view body, Chunk& chunk, const TextLayout& layout, float* vectors,
                 const std::string& path) {
  std::vector<std::string_view> fields;
  std::size_t pos = chunk.lines.begin;
  for (std::size_t r = 0; r < chunk.lines.lines; ++r) {
    const std::size_t row = chunk.first_row + r;
    const std::uint64_t line_no = layout.header_lines + row + 1;
    std::size_t eol = body.find('\n', pos);
    if (eol == std::string_view::npos || eol > chunk.lines.end) eol = chunk.lines.end;
    const std::string_view line = body.substr(pos, eol - pos);
    const auto column_of = [&](std::string_view field) {
      return static_cast<std::uint64_t>(field.data() - line.data()) + 1;
    };
    const std::size_t n = split_fields(line, fields);
    if (n == 0) throw InputError(Location::at_line(path, line_no), "empty line, expected a word and its values");
    if (n < layout.dim + 1)
      throw InputError(Location::at_line(path, line_no),
                       fmt::format("expected a word and {} values, found {} field{}", layout.dim, n,
                                   n == 1 ? "" : "s"));
    const std::size_t first_value = n - layout.dim;
    const char* word_end = fields[first_value - 1].data() + fields[first_value - 1].size();
    const std::string_view word(fields[0].data(), static_cast<std::size_t>(word_end - fields[0].data()));
    chunk.words.append(word);
    chunk.word_lengths.push_back(static_cast<std::uint32_t>(word.size()));
    float* out = vectors + row * layout.dim;
    for (std::size_t d = 0; d < layout.dim; ++d) {
      const std::string_view field = fields[first_value + d];
      const NumberParse parsed = parse_float(field, out[d]);
      if (parsed != NumberParse::Ok)
        throw InputError(Location::at_line(path, line_no, column_of(field)),
                         fmt::format("value {} of {}: {}", d + 1, quote(word), describe(parsed, field)));
    }
    pos = eol + 1;
  }
}

}  // namespace

Model read_text(const MappedFile& file, Format format, Progress* progress) {
  const std::string& path = file.path();
  const std::string_view text = file.text();
  const TextLayout layout = read_layout(text, format, path);
  std::string_view body = text.substr(layout.body);
  // Blank lines at the very end are not rows.
  while (!body.empty() && (is_blank(body.back()) || body.back() == '\n')) {
    const std::size_t nl = body.find_last_of('\n');
    const std::string_view tail = nl == std::string_view::npos ? body : body.substr(nl + 1);
    if (std::any_of(tail.begin(), tail.end(), [](char c) { return !is_blank(c); })) break;
    body = nl == std::string_view::npos ? std::string_view() : body.substr(0, nl);
  }

  // Chunks end at line ends; a final line without a newline is a line too.
  std::vector<Chunk> chunks;
  std::size_t rows = 0;
  for (const LineChunk& piece : line_chunks(body, kChunkBytes)) {
    chunks.push_back(Chunk{.lines = piece, .first_row = rows});
    rows += piece.lines;
  }
  if (rows == 0)
    throw InputError(Location::at_line(path, layout.header_lines + 1), "no vectors after the header");
  if (format == Format::Word2VecText && rows != layout.rows)
    throw InputError(Location::at_line(path, 1),
                     fmt::format("header says {} rows but the file has {} lines of vectors", layout.rows, rows));
  check_shape(rows, layout.dim, Location{.file = path});

  auto data = std::make_shared<ModelData>();
  data->vectors.resize(rows * layout.dim);
  // Every chunk parses to its first error; the earliest line's error is reported.
  FirstError first_error;
  tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t i) {
    try {
      parse_chunk(body, chunks[i], layout, data->vectors.data(), path);
    } catch (const InputError& e) {
      first_error.offer(e);
    }
    if (progress) progress->advance(chunks[i].lines.end - chunks[i].lines.begin);
  });
  first_error.throw_if_any();

  std::size_t word_bytes = 0;
  for (const Chunk& c : chunks) word_bytes += c.words.size();
  data->words.reserve(word_bytes);
  data->offsets.reserve(rows + 1);
  data->offsets.push_back(0);
  for (const Chunk& c : chunks) {
    data->words.append(c.words);
    for (std::uint32_t len : c.word_lengths) data->offsets.push_back(data->offsets.back() + len);
  }
  const std::size_t header_lines = layout.header_lines;
  return finish_model(std::move(data), rows, layout.dim, format, path, [&](std::size_t row) {
    return Location::at_line(path, header_lines + row + 1);
  });
}

void write_text(const Model& model, OutputFile& out, Format format, Progress* progress) {
  if (format == Format::Word2VecText) out.write(fmt::format("{} {}\n", model.rows, model.dim));
  constexpr std::size_t kRowsPerBatch = 4096;
  std::vector<std::string> batch;
  for (std::size_t first = 0; first < model.rows; first += kRowsPerBatch * 16) {
    const std::size_t last = std::min(model.rows, first + kRowsPerBatch * 16);
    const std::size_t pieces = (last - first + kRowsPerBatch - 1) / kRowsPerBatch;
    batch.assign(pieces, {});
    tbb::parallel_for(std::size_t{0}, pieces, [&](std::size_t p) {
      std::string& s = batch[p];
      const std::size_t r_end = std::min(last, first + (p + 1) * kRowsPerBatch);
      for (std::size_t r = first + p * kRowsPerBatch; r < r_end; ++r) {
        s.append(model.word(r));
        for (float v : model.vector(r)) {
          s.push_back(' ');
          append_shortest(s, v);
        }
        s.push_back('\n');
      }
    });
    for (const std::string& s : batch) out.write(s);
    if (progress) progress->advance(last - first);
  }
}

}  // namespace simkit::neighbors::detail
