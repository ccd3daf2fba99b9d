#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>
#include <fmt/format.h>

#include "text/utf8.hpp"
#include "neighbors/model_data.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"

namespace simkit::neighbors {

Format parse_format(std::string_view name) {
  if (name == "auto") return Format::Auto;
  if (name == "glove") return Format::Glove;
  if (name == "word2vec" || name == "word2vec-text" || name == "vec") return Format::Word2VecText;
  if (name == "word2vec-binary" || name == "word2vec-bin" || name == "bin") return Format::Word2VecBinary;
  if (name == "npy") return Format::Npy;
  if (name == "skv") return Format::Skv;
  throw UsageError(fmt::format("format {}: expected auto, glove, word2vec, word2vec-binary, npy "
                               "or skv",
                               quote(name)));
}

std::string_view format_name(Format format) {
  switch (format) {
    case Format::Auto: return "auto";
    case Format::Glove: return "glove";
    case Format::Word2VecText: return "word2vec";
    case Format::Word2VecBinary: return "word2vec-binary";
    case Format::Npy: return "npy";
    case Format::Skv: return "skv";
  }
  return "?";
}

std::optional<std::uint32_t> Model::find(std::string_view w) const {
  const std::uint32_t* end = sorted + rows;
  const std::uint32_t* at =
      std::lower_bound(sorted, end, w, [&](std::uint32_t row, std::string_view key) {
        return word(row) < key;
      });
  if (at != end && word(*at) == w) return *at;
  return std::nullopt;
}

void Model::wait_checked() const {
  if (pending_check.valid()) pending_check.get();
}

Format detect_format(std::string_view head, const std::string& path) {
  if (head.empty()) throw InputError(Location{.file = path}, "empty file, expected word vectors");
  if (head.starts_with("SIMKITWV")) return Format::Skv;
  if (head.starts_with("\x93NUMPY")) return Format::Npy;
  // word2vec starts with a line of two counts; binary if its first record is not text.
  const std::size_t eol = head.find('\n');
  const std::string_view first = head.substr(0, eol);
  unsigned long long rows = 0, dim = 0;
  char extra = 0;
  const std::string line(first.substr(0, 64));
  if (first.size() < 64 && std::sscanf(line.c_str(), "%llu %llu %c", &rows, &dim, &extra) == 2) {
    if (eol == std::string_view::npos) return Format::Word2VecText;
    std::string_view record = head.substr(eol + 1);
    const std::size_t space = record.find(' ');
    if (space == std::string_view::npos) return Format::Word2VecText;
    const std::string_view values = record.substr(space + 1, std::min<std::size_t>(4 * dim, 4096));
    for (char c : values) {
      const auto u = static_cast<unsigned char>(c);
      if (u == '\n') break;
      const bool texty = (u >= '0' && u <= '9') || u == '-' || u == '+' || u == '.' ||
                         u == 'e' || u == 'E' || u == ' ' || u == '\t' || u == '\r';
      if (!texty) return Format::Word2VecBinary;
    }
    return Format::Word2VecText;
  }
  return Format::Glove;
}

namespace detail {

void check_word(std::string_view word, const RowLocator& locate, std::size_t row) {
  if (word.empty()) throw InputError(locate(row), "empty word");
  if (const std::size_t bad = first_invalid_utf8(word); bad != std::string_view::npos)
    throw InputError(locate(row), fmt::format("word {} is not valid UTF-8 (byte {} of the word)",
                                              quote(word), bad + 1));
  for (char c : word)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      throw InputError(locate(row), fmt::format("word {} contains a control character", quote(word)));
}

void check_rows(std::size_t rows, const std::function<void(std::size_t row)>& check) {
  std::atomic<std::size_t> first_bad{rows};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 4096), [&](const auto& range) {
    for (std::size_t r = range.begin(); r < range.end() && r < first_bad.load(std::memory_order_relaxed); ++r) {
      try {
        check(r);
      } catch (const InputError&) {
        std::size_t seen = first_bad.load();
        while (r < seen && !first_bad.compare_exchange_weak(seen, r)) {
        }
        return;
      }
    }
  });
  // The same check again, alone, for the lowest bad row's message (checks are pure).
  if (first_bad < rows) check(first_bad);
}

void check_shape(std::uint64_t rows, std::uint64_t dim, const Location& where) {
  constexpr std::uint64_t kMaxDim = 1u << 20;
  constexpr std::uint64_t kMaxRows = 0xFFFFFFFEull;
  if (rows == 0) throw InputError(where, "the model has no rows, expected at least one word");
  if (dim == 0) throw InputError(where, "dimension 0, expected at least one value per word");
  if (dim > kMaxDim)
    throw InputError(where, fmt::format("dimension {} is absurd (at most {})", dim, kMaxDim));
  if (rows > kMaxRows)
    throw InputError(where, fmt::format("{} rows is more than simkit indexes ({})", rows, kMaxRows));
}

// A row whose length overflows float32 (values near FLT_MAX) could not be scored without
// infinities, so it is refused like any other unreadable value.
std::vector<float> row_norms(const Model& model, const RowLocator& locate) {
  const float* vectors = model.vectors;
  const std::size_t rows = model.rows, dim = model.dim;
  std::vector<float> norms(rows);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 4096), [&](const auto& range) {
    for (std::size_t r = range.begin(); r != range.end(); ++r) {
      const float* v = vectors + r * dim;
      double sum = 0;
      for (std::size_t d = 0; d < dim; ++d) sum += static_cast<double>(v[d]) * v[d];
      norms[r] = static_cast<float>(std::sqrt(sum));
    }
  });
  for (std::size_t r = 0; r < rows; ++r)
    if (!std::isfinite(norms[r]))
      throw InputError(locate(r), fmt::format("the vector of {} is too long: its norm overflows float32",
                                              quote(model.word(r))));
  return norms;
}

std::vector<std::uint32_t> sorted_index(const Model& model, const RowLocator& locate) {
  std::vector<std::uint32_t> order(model.rows);
  for (std::size_t i = 0; i < model.rows; ++i) order[i] = static_cast<std::uint32_t>(i);
  tbb::parallel_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::string_view wa = model.word(a), wb = model.word(b);
    return wa != wb ? wa < wb : a < b;
  });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (model.word(order[i - 1]) == model.word(order[i])) {
      const Location first = locate(order[i - 1]);
      const std::string first_at =
          first.line ? fmt::format("line {}", first.line) : fmt::format("byte {}", first.offset);
      throw InputError(locate(order[i]), fmt::format("duplicate word {} (first at {})",
                                                     quote(model.word(order[i])), first_at));
    }
  }
  return order;
}

Model finish_model(std::shared_ptr<ModelData> data, std::size_t rows, std::size_t dim,
                   Format format, const std::string& source, const RowLocator& locate) {
  Model model;
  model.rows = rows;
  model.dim = dim;
  model.format = format;
  model.source = source;
  model.vectors = data->external_vectors ? data->external_vectors : data->vectors.data();
  model.word_bytes = data->words.data();
  model.word_offsets = data->offsets.data();
  check_rows(rows, [&](std::size_t r) { check_word(model.word(r), locate, r); });
  data->sorted = sorted_index(model, locate);
  data->norms = row_norms(model, locate);
  model.sorted = data->sorted.data();
  model.norms = data->norms.data();
  model.storage = std::move(data);
  return model;
}

}  // namespace detail

Model make_model(std::vector<std::string> words, std::vector<float> vectors, std::size_t dim,
                 const std::string& source) {
  const Location where{.file = source};
  detail::check_shape(words.size(), dim, where);
  if (vectors.size() != words.size() * dim)
    throw InputError(where, fmt::format("{} words need {} values, got {}", words.size(),
                                        words.size() * dim, vectors.size()));
  for (std::size_t i = 0; i < vectors.size(); ++i)
    if (!std::isfinite(vectors[i]))
      throw InputError(where, fmt::format("value {} of row {} is not finite", i % dim + 1, i / dim + 1));
  auto data = std::make_shared<detail::ModelData>();
  data->vectors = std::move(vectors);
  data->offsets.reserve(words.size() + 1);
  data->offsets.push_back(0);
  for (const std::string& w : words) {
    data->words += w;
    data->offsets.push_back(data->words.size());
  }
  const std::size_t rows = words.size();
  return detail::finish_model(std::move(data), rows, dim, Format::Auto, source,
                              [&](std::size_t row) { return Location{.file = fmt::format("{} row {}", source, row + 1)}; });
}

namespace {

Model read_any(const MappedFile& file, Format format, const MappedFile* words, Progress* progress,
               bool background) {
  const std::string& path = file.path();
  if (format == Format::Auto) format = detect_format(file.text().substr(0, 1 << 16), path);
  if (file.size() == 0) throw InputError(Location{.file = path}, "empty file, expected word vectors");
  switch (format) {
    case Format::Glove:
    case Format::Word2VecText: return detail::read_text(file, format, progress);
    case Format::Word2VecBinary: return detail::read_word2vec_binary(file, progress);
    case Format::Npy: return detail::read_npy(file, words, progress);
    case Format::Skv: return detail::read_skv(file, progress, background);
    case Format::Auto: break;
  }
  throw UsageError("internal: no format");
}

}  // namespace

Model load_model(const std::string& path, const LoadOptions& options) {
  const MappedFile file = MappedFile::open(path);
  file.advise_will_need();  // read whole (checksum, upload), then at random (searches)
  std::optional<MappedFile> words;
  if (!options.words_path.empty()) words = MappedFile::open(options.words_path);
  return read_any(file, options.format, words ? &*words : nullptr, options.progress,
                  options.check_in_background);
}

Model load_model_from_memory(std::string_view bytes, const std::string& name, Format format,
                             std::string_view words) {
  const MappedFile file = MappedFile::from_bytes(name, bytes);
  std::optional<MappedFile> word_list;
  if (!words.empty()) word_list = MappedFile::from_bytes(name + " words", words);
  return read_any(file, format, word_list ? &*word_list : nullptr, nullptr, false);
}

void save_model(const Model& model, const std::string& path, Format format, Progress* progress,
                const std::string& words_path) {
  if (format == Format::Npy) {
    if (words_path.empty()) throw UsageError("an .npy matrix needs a file for its word list");
    OutputFile out(path), words(words_path);
    detail::write_npy(model, out, words, progress);
    words.commit();
    out.commit();
    return;
  }
  OutputFile out(path);
  switch (format) {
    case Format::Glove:
    case Format::Word2VecText: detail::write_text(model, out, format, progress); break;
    case Format::Word2VecBinary: detail::write_word2vec_binary(model, out, progress); break;
    case Format::Skv: detail::write_skv(model, out, progress); break;
    default:
      throw UsageError(fmt::format("cannot write the {} format; choose glove, word2vec, "
                                   "word2vec-binary, npy or skv",
                                   format_name(format)));
  }
  out.commit();
}

Format format_of_extension(std::string_view path) {
  const std::size_t dot = path.rfind('.'), slash = path.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return Format::Auto;
  const std::string_view ext = path.substr(dot);
  if (ext == ".skv") return Format::Skv;
  if (ext == ".txt") return Format::Glove;
  if (ext == ".vec") return Format::Word2VecText;
  if (ext == ".bin") return Format::Word2VecBinary;
  if (ext == ".npy") return Format::Npy;
  return Format::Auto;
}

}  // namespace simkit::neighbors
