// word2vec binary: an `N D` text line, then N records `word<space>` + D little-endian
// float32 values, each optionally followed by a newline (the original tool writes one).
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "neighbors/model_data.hpp"
#include "simkit/progress.hpp"

namespace simkit::neighbors::detail {

namespace {
constexpr std::size_t kMaxWordBytes = 4096;

bool skippable(char c) { return c == '\n' || c == '\r' || c == '\t' || c == ' '; }
}  // namespace

Model read_word2vec_binary(const MappedFile& file, Progress* progress) {
  const std::string& path = file.path();
  const std::string_view text = file.text();
  const CountHeader header = read_count_header(text, path);
  const std::size_t rows = header.rows, dim = header.dim;
  const std::uint64_t value_bytes = dim * 4;
  // Each record needs at least a one-byte word, a space and the values.
  const std::uint64_t available = text.size() - header.body;
  if (rows > available / (value_bytes + 2))
    throw InputError(Location::at_line(path, 1),
                     fmt::format("header says {} rows of {} values ({} bytes at least) but the "
                                 "file has only {} bytes after it: truncated or not word2vec",
                                 rows, dim, rows * (value_bytes + 2), available));

  auto data = std::make_shared<ModelData>();
  data->vectors.resize(rows * dim);
  data->offsets.reserve(rows + 1);
  data->offsets.push_back(0);
  std::vector<std::uint64_t> record_offsets;  // for messages about duplicates
  record_offsets.reserve(rows);

  std::size_t pos = header.body;
  std::size_t reported = pos;
  for (std::size_t row = 0; row < rows; ++row) {
    while (pos < text.size() && skippable(text[pos])) ++pos;
    const std::size_t word_begin = pos;
    record_offsets.push_back(word_begin);
    const std::size_t limit = std::min(text.size(), pos + kMaxWordBytes + 1);
    const void* space = std::memchr(text.data() + pos, ' ', limit - pos);
    if (space == nullptr) {
      if (limit == text.size())
        throw InputError(Location::at_offset(path, word_begin),
                         fmt::format("truncated: row {} of {} has no word followed by a space", row + 1, rows));
      throw InputError(Location::at_offset(path, word_begin),
                       fmt::format("row {}: no space within {} bytes: word too long or not word2vec binary",
                                   row + 1, kMaxWordBytes));
    }
    const std::size_t word_end = static_cast<const char*>(space) - text.data();
    data->words.append(text.substr(word_begin, word_end - word_begin));
    data->offsets.push_back(data->words.size());
    pos = word_end + 1;
    if (text.size() - pos < value_bytes)
      throw InputError(Location::at_offset(path, pos),
                       fmt::format("truncated: row {} needs {} bytes of values, the file ends after {}",
                                   row + 1, value_bytes, text.size() - pos));
    float* out = data->vectors.data() + row * dim;
    std::memcpy(out, text.data() + pos, value_bytes);
    for (std::size_t d = 0; d < dim; ++d)
      if (!std::isfinite(out[d]))
        throw InputError(Location::at_offset(path, pos + 4 * d),
                         fmt::format("value {} of {} is NaN or infinite",
                                     d + 1, quote(text.substr(word_begin, word_end - word_begin))));
    pos += value_bytes;
    if (progress && pos - reported > (1u << 24)) {
      progress->advance(pos - reported);
      reported = pos;
    }
  }
  while (pos < text.size() && skippable(text[pos])) ++pos;
  if (pos != text.size())
    throw InputError(Location::at_offset(path, pos),
                     fmt::format("unexpected data after the {} rows the header announces", rows));
  if (progress) progress->advance(pos - reported);
  return finish_model(std::move(data), rows, dim, Format::Word2VecBinary, path,
                      [&](std::size_t row) { return Location::at_offset(path, record_offsets[row]); });
}

void write_word2vec_binary(const Model& model, OutputFile& out, Progress* progress) {
  out.write(fmt::format("{} {}\n", model.rows, model.dim));
  std::string record;
  for (std::size_t r = 0; r < model.rows; ++r) {
    record.assign(model.word(r));
    record.push_back(' ');
    record.append(reinterpret_cast<const char*>(model.vectors + r * model.dim), model.dim * sizeof(float));
    record.push_back('\n');
    out.write(record);
    if (progress && (r & 0xFFFF) == 0xFFFF) progress->advance(0x10000);
  }
  if (progress) progress->advance(model.rows & 0xFFFF);
}

}  // namespace simkit::neighbors::detail
