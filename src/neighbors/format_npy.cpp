// NumPy .npy float matrices (N x D, '<f4' used in place, '<f8' converted) with the words
// in a separate file, one a line (the header is core/npy_header's); written as '<f4'.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "neighbors/model_data.hpp"
#include "core/npy_header.hpp"
#include "simkit/progress.hpp"

namespace simkit::neighbors::detail {

using simkit::detail::NpyHeader;
using simkit::detail::read_npy_header;

static_assert(std::endian::native == std::endian::little, "simkit reads little-endian data");

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

void write_npy(const Model& model, OutputFile& out, OutputFile& words, Progress* progress) {
  // Format version 1.0: the dict, padded with spaces and ended by a newline so that the
  // data starts on a 64-byte boundary.
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", model.rows,
                                   model.dim);
  header.append(63 - (10 + header.size()) % 64, ' ');
  header.push_back('\n');
  const auto length = static_cast<std::uint16_t>(header.size());
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix.push_back(static_cast<char>(length & 0xFF));
  prefix.push_back(static_cast<char>(length >> 8));
  out.write(prefix + header);
  out.write({reinterpret_cast<const char*>(model.vectors), model.rows * model.dim * sizeof(float)});
  std::string list;
  for (std::size_t r = 0; r < model.rows; ++r) {
    list.append(model.word(r));
    list.push_back('\n');
  }
  words.write(list);
  if (progress) progress->advance(model.rows);
}

}  // namespace simkit::neighbors::detail
