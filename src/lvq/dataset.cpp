// Data sets in: CSV/TSV text (parsed on all cores), NumPy .npy, MNIST idx and simkit's
// .skl, with labels in the text, in a file of their own (a label a line, or idx1) or
// absent. Every malformed input is refused with the file and the line or byte.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <unordered_map>

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>

#include "text/lines.hpp"
#include "core/npy_header.hpp"
#include "text/number_text.hpp"
#include "text/utf8.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/lvq.hpp"

namespace simkit::lvq {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_integer(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return !s.empty() && s.size() < 19 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

long long integer_value(std::string_view s) {
  long long v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

void check_label(std::string_view label, const Location& where) {
  if (label.empty()) throw InputError(where, "missing label (an empty field)");
  if (first_invalid_utf8(label) != std::string_view::npos) throw InputError(where, "the label is not valid UTF-8");
}

// Turns per-row label names into class indices: onto `fixed` when given (an unknown name
// is an error at its row), else onto the sorted distinct names.
void assign_labels(Dataset& data, const std::vector<std::string_view>& names,
                   const std::function<Location(std::size_t)>& where, const std::vector<std::string>* fixed) {
  data.classes = fixed != nullptr ? *fixed : sorted_classes(std::vector<std::string>(names.begin(), names.end()));
  std::unordered_map<std::string_view, std::uint32_t> index;
  for (std::uint32_t c = 0; c < data.classes.size(); ++c) index.emplace(data.classes[c], c);
  data.labels.resize(names.size());
  for (std::size_t r = 0; r < names.size(); ++r) {
    const auto it = index.find(names[r]);
    if (it == index.end())
      throw InputError(where(r), fmt::format("label {} is not one of the model's {} classes", quote(names[r]),
                                             data.classes.size()));
    data.labels[r] = it->second;
  }
}

// ---- CSV / TSV ----

std::vector<std::string_view> split(std::string_view line, char separator) {
  std::vector<std::string_view> fields;
  for (std::size_t at = 0;;) {
    const std::size_t end = line.find(separator, at);
    fields.push_back(trim(line.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at)));
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return fields;
}

Dataset read_text(const std::string& path, std::string_view text, const ReadOptions& options) {
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos)
    throw InputError(Location::at_offset(path, bad), "not UTF-8 text (expected CSV or TSV rows)");
  struct Row {
    std::string_view text;
    std::uint64_t line;
  };
  std::vector<Row> rows;
  for_each_line(text, [&](std::string_view line, std::uint64_t number) {
    if (!trim(line).empty()) rows.push_back({line, number});
  });
  if (rows.empty()) throw InputError(Location::at_line(path, 1), "no data rows (an empty file)");
  const char separator = rows.front().text.find('\t') != std::string_view::npos ? '\t' : ',';
  const std::size_t fields = split(rows.front().text, separator).size();

  // Where the label is: first/last field, or none; a model's dims settle rows without one.
  LabelColumn column = options.label_column;
  if (options.dims > 0) {
    if (fields == options.dims) column = LabelColumn::none;
    else if (fields != options.dims + 1)
      throw InputError(Location::at_line(path, rows.front().line),
                       fmt::format("{} fields, expected the model's {} features (and a label or not)", fields,
                                   options.dims));
  }
  const std::size_t dims = column == LabelColumn::none ? fields : fields - 1;
  if (dims == 0) throw InputError(Location::at_line(path, rows.front().line), "a row needs a label and at least one feature");
  const std::size_t label_at = column == LabelColumn::first ? 0 : fields - 1;
  const std::size_t first_feature = column == LabelColumn::first ? 1 : 0;

  // A first line whose features are all words is a header.
  {
    const auto head = split(rows.front().text, separator);
    bool any_number = false;
    for (std::size_t f = 0; f < dims; ++f) {
      float v;
      any_number = any_number || detail::parse_float(head[first_feature + f], v) == detail::NumberParse::Ok;
    }
    if (!any_number) rows.erase(rows.begin());
    if (rows.empty()) throw InputError(Location::at_line(path, 2), "no data rows after the header");
  }

  Dataset data;
  data.rows = rows.size();
  data.dims = dims;
  data.features.resize(data.rows * dims);
  std::vector<std::string_view> labels(column == LabelColumn::none ? 0 : data.rows);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows.size(), 1024), [&](const auto& range) {
    for (std::size_t r = range.begin(); r < range.end(); ++r) {
      const auto parts = split(rows[r].text, separator);
      if (parts.size() != fields)
        throw InputError(Location::at_line(path, rows[r].line),
                         fmt::format("{} fields, expected {} like the first row (ragged CSV)", parts.size(), fields));
      float* out = data.features.data() + r * dims;
      for (std::size_t f = 0; f < dims; ++f) {
        const std::string_view field = parts[first_feature + f];
        const auto parsed = detail::parse_float(field, out[f]);
        if (parsed != detail::NumberParse::Ok)
          throw InputError(Location::at_line(path, rows[r].line, first_feature + f + 1),
                           fmt::format("feature {}: {}", f + 1, detail::describe(parsed, field)));
      }
      if (!labels.empty()) {
        check_label(parts[label_at], Location::at_line(path, rows[r].line, label_at + 1));
        labels[r] = parts[label_at];
      }
    }
  });
  if (!labels.empty())
    assign_labels(data, labels, [&](std::size_t r) { return Location::at_line(path, rows[r].line); },
                  options.classes);
  return data;
}

// ---- labels files (for .npy and idx) ----

std::uint32_t big_endian32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

bool is_idx(std::string_view bytes) { return bytes.size() >= 4 && bytes[0] == 0 && bytes[1] == 0; }

struct IdxArray {
  std::vector<std::uint64_t> shape;
  unsigned char type = 0;
  std::string_view data;
};

IdxArray read_idx(std::string_view bytes, const std::string& path) {
  if (!is_idx(bytes)) throw InputError(Location::at_offset(path, 0), "not an idx file (expected two zero bytes)");
  IdxArray a;
  a.type = static_cast<unsigned char>(bytes[2]);
  if (a.type != 0x08 && a.type != 0x0D)
    throw InputError(Location::at_offset(path, 2),
                     fmt::format("idx element type 0x{:02X} is not supported (0x08 unsigned bytes or 0x0D floats)", a.type));
  const std::size_t ndims = static_cast<unsigned char>(bytes[3]);
  if (ndims == 0) throw InputError(Location::at_offset(path, 3), "idx file with 0 dimensions");
  if (bytes.size() < 4 + 4 * ndims) throw InputError(Location::at_offset(path, bytes.size()), "truncated idx header");
  std::uint64_t count = 1;
  for (std::size_t d = 0; d < ndims; ++d) {
    a.shape.push_back(big_endian32(reinterpret_cast<const unsigned char*>(bytes.data()) + 4 + 4 * d));
    if (a.shape.back() != 0 && count > bytes.size() / a.shape.back())
      throw InputError(Location::at_offset(path, 4 + 4 * d), "idx sizes call for more data than the file holds");
    count *= a.shape.back();
  }
  const std::size_t item = a.type == 0x08 ? 1 : 4;
  const std::size_t begin = 4 + 4 * ndims;
  if (count > (bytes.size() - begin) / item || count * item != bytes.size() - begin)
    throw InputError(Location::at_offset(path, bytes.size()),
                     fmt::format("idx sizes call for {} data bytes, the file has {}", count * item, bytes.size() - begin));
  a.data = bytes.substr(begin);
  return a;
}

// Label names of `rows` samples from `path`: an idx1 file or text, a label a line.
void read_labels_file(Dataset& data, const std::string& data_path, const std::string& path, const ReadOptions& options) {
  const MappedFile file = open_text(path);
  const std::string_view bytes = file.text();
  std::vector<std::string> owned;
  std::vector<std::uint64_t> lines;
  if (is_idx(bytes)) {
    const IdxArray a = read_idx(bytes, path);
    if (a.shape.size() != 1 || a.type != 0x08)
      throw InputError(Location::at_offset(path, 2), "an idx labels file must be one-dimensional unsigned bytes (idx1-ubyte)");
    for (const char c : a.data) owned.push_back(std::to_string(static_cast<unsigned char>(c)));
  } else {
    if (const std::size_t bad = first_invalid_utf8(bytes); bad != std::string_view::npos)
      throw InputError(Location::at_offset(path, bad), "not UTF-8 text (expected a label a line)");
    for_each_line(bytes, [&](std::string_view line, std::uint64_t number) {
      const std::string_view label = trim(line);
      check_label(label, Location::at_line(path, number));
      owned.emplace_back(label);
      lines.push_back(number);
    });
  }
  if (owned.size() != data.rows)
    throw InputError(Location::at_line(path, owned.size() + 1),
                     fmt::format("{} labels for the {} samples of {}", owned.size(), data.rows, data_path));
  const std::vector<std::string_view> names(owned.begin(), owned.end());
  assign_labels(data, names,
                [&](std::size_t r) { return lines.empty() ? Location::at_offset(path, 8 + r) : Location::at_line(path, lines[r]); },
                options.classes);
}

std::string labels_beside(const std::string& images) {
  const std::string name = std::filesystem::path(images).filename().string();
  const std::size_t at = name.find("images-idx3");
  if (at == std::string::npos) return "";
  std::string sibling = name;
  sibling.replace(at, 11, "labels-idx1");
  const auto candidate = std::filesystem::path(images).parent_path() / sibling;
  return std::filesystem::exists(candidate) ? candidate.string() : "";
}

Dataset read_idx_images(const std::string& path, std::string_view bytes, const ReadOptions& options) {
  const IdxArray a = read_idx(bytes, path);
  if (a.shape.size() < 2)
    throw InputError(Location::at_offset(path, 3), "an idx data file needs at least 2 dimensions (samples x features)");
  Dataset data;
  data.rows = a.shape[0];
  data.dims = 1;
  for (std::size_t d = 1; d < a.shape.size(); ++d) data.dims *= a.shape[d];
  data.features.resize(data.rows * data.dims);
  for (std::size_t i = 0; i < data.features.size(); ++i) {
    if (a.type == 0x08) {
      data.features[i] = static_cast<unsigned char>(a.data[i]);
    } else {
      const std::uint32_t bits = big_endian32(reinterpret_cast<const unsigned char*>(a.data.data()) + 4 * i);
      float v;
      std::memcpy(&v, &bits, 4);
      if (!std::isfinite(v)) throw InputError(Location::at_offset(path, 4 * (i + 1)), "NaN or infinite feature value");
      data.features[i] = v;
    }
  }
  std::string labels = options.labels_path;
  if (labels.empty()) labels = labels_beside(path);
  if (!labels.empty()) read_labels_file(data, path, labels, options);
  return data;
}

// ---- .npy ----

Dataset read_npy(const std::string& path, std::string_view bytes, const ReadOptions& options) {
  const detail::NpyHeader header = detail::read_npy_header(bytes, path);
  const Location at_header = Location::at_offset(path, 8);
  std::size_t item = 0;
  if (header.descr == "<f4") item = 4;
  else if (header.descr == "<f8") item = 8;
  else if (header.descr == "|u1") item = 1;
  else
    throw InputError(at_header, fmt::format("dtype {} is not supported: expected float32, float64 or uint8", quote(header.descr)));
  if (header.fortran_order) throw InputError(at_header, "Fortran-order arrays are not supported: save a C-order array");
  if (header.shape.size() != 2)
    throw InputError(at_header, fmt::format("expected a 2-D matrix (samples x features), found {} dimensions", header.shape.size()));
  Dataset data;
  data.rows = header.shape[0];
  data.dims = header.shape[1];
  const std::size_t available = bytes.size() - header.data_offset;
  if (data.dims == 0 || data.rows > available / item / data.dims || data.rows * data.dims * item != available)
    throw InputError(Location::at_offset(path, bytes.size()),
                     fmt::format("the shape ({}, {}) does not match the {} data bytes", data.rows, data.dims, available));
  data.features.resize(data.rows * data.dims);
  const char* p = bytes.data() + header.data_offset;
  for (std::size_t i = 0; i < data.features.size(); ++i) {
    double v;
    if (item == 4) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      v = f;
    } else if (item == 8) {
      std::memcpy(&v, p + 8 * i, 8);
    } else {
      v = static_cast<unsigned char>(p[i]);
    }
    if (!std::isfinite(v) || std::fabs(v) > 3.4028234663852886e38)
      throw InputError(Location::at_offset(path, header.data_offset + item * i),
                       fmt::format("row {} feature {}: NaN, infinite or out of float32 range", i / data.dims + 1, i % data.dims + 1));
    data.features[i] = static_cast<float>(v);
  }
  if (!options.labels_path.empty()) read_labels_file(data, path, options.labels_path, options);
  return data;
}

}  // namespace

std::vector<std::string> sorted_classes(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (std::all_of(names.begin(), names.end(), [](const std::string& s) { return is_integer(s); }))
    std::stable_sort(names.begin(), names.end(),
                     [](const std::string& a, const std::string& b) { return integer_value(a) < integer_value(b); });
  return names;
}

Dataset hold_out(Dataset& data, double fraction, std::uint64_t seed) {
  if (!(fraction > 0 && fraction < 1)) throw UsageError("--validation must be a fraction between 0 and 1");
  if (data.rows < 2) throw InputError(Location{}, "too few samples to hold some out");
  std::vector<std::uint32_t> rows(data.rows);
  std::iota(rows.begin(), rows.end(), 0u);
  std::mt19937_64 rng(seed ^ 0x5eed5eedull);
  std::shuffle(rows.begin(), rows.end(), rng);
  const std::size_t held = std::clamp<std::size_t>(static_cast<std::size_t>(fraction * data.rows + 0.5), 1, data.rows - 1);
  std::vector<bool> out(data.rows);
  for (std::size_t i = 0; i < held; ++i) out[rows[i]] = true;
  Dataset kept, taken;
  for (Dataset* d : {&kept, &taken}) {
    d->dims = data.dims;
    d->classes = data.classes;
  }
  for (std::size_t r = 0; r < data.rows; ++r) {
    Dataset& to = out[r] ? taken : kept;
    to.features.insert(to.features.end(), data.features.begin() + r * data.dims, data.features.begin() + (r + 1) * data.dims);
    if (data.labelled()) to.labels.push_back(data.labels[r]);
    ++to.rows;
  }
  data = std::move(kept);
  return taken;
}

Dataset read_dataset(const std::string& path, const ReadOptions& options) {
  Dataset data;
  if (path.ends_with(".npy")) {
    const MappedFile file = MappedFile::open(path);
    data = read_npy(path, file.text(), options);
  } else if (path.ends_with(".skl")) {
    const MappedFile file = MappedFile::open(path);
    data = parse_skl(file.text(), path);
    if (options.classes != nullptr && data.labelled()) {  // onto the model's classes
      const std::vector<std::string> own = data.classes;
      std::vector<std::string_view> names(data.rows);
      for (std::size_t r = 0; r < data.rows; ++r) names[r] = own[data.labels[r]];
      assign_labels(data, names, [&](std::size_t) { return Location::at_offset(path, 0); }, options.classes);
    }
  } else {
    const MappedFile file = open_text(path);
    if (is_idx(file.text())) data = read_idx_images(path, file.text(), options);
    else data = read_text(path, file.text(), options);
  }
  if (data.rows == 0) throw InputError(Location::at_offset(path, 0), "no samples");
  if (data.dims == 0) throw InputError(Location::at_offset(path, 0), "the samples have no features");
  if (options.dims > 0 && data.dims != options.dims)
    throw InputError(Location::at_offset(path, 0),
                     fmt::format("{} features a sample, the model has {}", data.dims, options.dims));
  return data;
}

}  // namespace simkit::lvq
