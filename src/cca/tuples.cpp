// Tuple input for `simkit cca`: text lines (CSV, TSV or spaces), simkit's .sks binary
// streams, and tuples zipped side by side from several readers. Every reader takes its
// input as it arrives, so answers can follow each tuple of a live stream.
//
// .sks layout (little-endian):
//   header  "SKSTREAM" | u32 version (1) | u32 columns | u64 XXH3 of the 16 bytes before
//   block   u32 rows (>= 1) | u32 0 | rows x columns float32 | u64 XXH3 of the block's
//           bytes before it
//   end     u32 0 | u32 0
#include <sys/stat.h>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <string_view>

#include <fmt/format.h>
#include <xxhash.h>

#include "core/binary_io.hpp"
#include "text/number_text.hpp"
#include "simkit/cca.hpp"
#include "simkit/error.hpp"

namespace simkit::cca {

namespace {

constexpr char kMagic[8] = {'S', 'K', 'S', 'T', 'R', 'E', 'A', 'M'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kBlockRows = 4096;
// Values a block may hold (64 MB of float32): the writer stays below it, and a damaged
// row count cannot make the reader allocate more.
constexpr std::size_t kBlockValues = std::size_t{1} << 24;

bool is_live(std::FILE* stream) {
  struct stat st {};
  return fstat(fileno(stream), &st) == 0 && !S_ISREG(st.st_mode);
}

// Splits a line into fields: by commas when it has one, else by runs of tabs/spaces.
void split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  if (line.find(',') != std::string_view::npos) {
    std::size_t at = 0;
    while (true) {
      const std::size_t end = line.find(',', at);
      std::string_view field = line.substr(at, end == std::string_view::npos ? line.size() - at : end - at);
      while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
      while (!field.empty() && (field.back() == ' ' || field.back() == '\t')) field.remove_suffix(1);
      fields.push_back(field);
      if (end == std::string_view::npos) break;
      at = end + 1;
    }
    return;
  }
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    if (at == line.size()) break;
    std::size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    fields.push_back(line.substr(at, end - at));
    at = end;
  }
}

class TextReader final : public TupleReader {
 public:
  TextReader(std::FILE* stream, std::string name)
      : stream_(stream), name_(std::move(name)), live_(is_live(stream)) {
    // The column count comes from the first non-empty line.
    while (read_line()) {
      if (!blank(line_)) {
        split_fields(line_, fields_);
        width_ = fields_.size();
        pending_ = true;
        return;
      }
      ++leading_blanks_;
    }
  }

  std::size_t columns() const override { return width_; }
  bool live() const override { return live_; }

  std::size_t next(std::vector<double>& out, std::size_t max_rows) override {
    out.clear();
    if (width_ == 0) return 0;  // only blank lines: no tuple at all
    std::size_t rows = 0;
    // Blank lines before the first tuple are missing tuples too, but their width is
    // known only now.
    for (; leading_blanks_ > 0 && rows < max_rows; --leading_blanks_, ++rows) out.resize(out.size() + columns(), 0.0);
    // Lines are read here one after another, their numbers parsed on all cores (the
    // parsing is most of a text file's reading).
    const std::size_t first = rows;
    text_.clear();
    starts_.assign(1, 0);
    line_numbers_.clear();
    std::exception_ptr unreadable;  // a line that cannot be read: after the errors before it
    try {
      while (rows < max_rows) {
        if (!pending_ && !read_line()) break;
        pending_ = false;
        text_.append(line_);
        starts_.push_back(text_.size());
        line_numbers_.push_back(line_number_);
        ++rows;
      }
    } catch (const Error&) {
      unreadable = std::current_exception();
    }
    out.resize(rows * width_, 0.0);
    const std::size_t lines = rows - first;
    std::atomic<std::size_t> first_bad{lines};
    const auto parse_lines = [&](const tbb::blocked_range<std::size_t>& range) {
      std::vector<std::string_view> fields;
      for (std::size_t i = range.begin(); i != range.end(); ++i)
        if (!parse(line(i), fields, out.data() + (first + i) * width_)) {
          std::size_t seen = first_bad.load();
          while (i < seen && !first_bad.compare_exchange_weak(seen, i)) {
          }
          return;
        }
    };
    if (lines < 64) {
      parse_lines({0, lines});
    } else {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, lines, 32), parse_lines);
    }
    if (first_bad < lines) refuse(first_bad);
    if (unreadable) std::rethrow_exception(unreadable);
    return rows;
  }

 private:
  static bool blank(std::string_view line) {
    return line.find_first_not_of(" \t\r") == std::string_view::npos;
  }

  bool read_line() {
    errno = 0;
    const ssize_t got = getline(&buffer_.data, &buffer_.capacity, stream_);
    if (got < 0) {
      if (std::ferror(stream_)) throw FileError(Location{name_}, std::string("cannot read: ") + std::strerror(errno), errno);
      return false;
    }
    ++line_number_;
    line_ = std::string_view(buffer_.data, static_cast<std::size_t>(got));
    if (!line_.empty() && line_.back() == '\n') line_.remove_suffix(1);
    if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
    if (line_.find('\0') != std::string_view::npos)
      throw InputError(Location::at_line(name_, line_number_), "a NUL byte: this is not a text file");
    return true;
  }

  std::string_view line(std::size_t i) const { return std::string_view(text_).substr(starts_[i], starts_[i + 1] - starts_[i]); }

  // A line's tuple into row (a blank line: a missing tuple, zeros); false when a field
  // count or a number is wrong (refuse() says which).
  bool parse(std::string_view text, std::vector<std::string_view>& fields, double* row) const {
    if (blank(text)) return true;
    split_fields(text, fields);
    if (fields.size() != width_) return false;
    for (std::size_t c = 0; c < width_; ++c)
      if (detail::parse_double(fields[c], row[c]) != detail::NumberParse::Ok) return false;
    return true;
  }

  // Throws what is wrong with the chunk's i-th line.
  [[noreturn]] void refuse(std::size_t i) const {
    const Location where = Location::at_line(name_, line_numbers_[i]);
    std::vector<std::string_view> fields;
    split_fields(line(i), fields);
    if (fields.size() != width_)
      throw InputError(where, fmt::format("expected {} fields as on the first tuple's line, found {}", width_, fields.size()));
    double value = 0;
    for (std::size_t c = 0; c < width_; ++c) {
      const detail::NumberParse result = detail::parse_double(fields[c], value);
      if (result != detail::NumberParse::Ok)
        throw InputError(where, fmt::format("field {}: {}", c + 1, detail::describe(result, fields[c])));
    }
    throw InputError(where, "cannot read this line");  // (parse() and this agree: not reached)
  }

  std::FILE* stream_;
  std::string name_;
  bool live_;
  // getline's buffer, a member of its own so that a constructor that throws frees it too.
  struct LineBuffer {
    char* data = nullptr;
    std::size_t capacity = 0;
    LineBuffer() = default;
    LineBuffer(const LineBuffer&) = delete;
    LineBuffer& operator=(const LineBuffer&) = delete;
    ~LineBuffer() { std::free(data); }
  } buffer_;
  std::string_view line_;
  std::vector<std::string_view> fields_;
  std::string text_;                          // a chunk's lines, back to back
  std::vector<std::size_t> starts_;           // where each begins (and one past the last)
  std::vector<std::uint64_t> line_numbers_;   // each one's line in the file
  std::uint64_t line_number_ = 0;
  std::size_t width_ = 0;
  std::size_t leading_blanks_ = 0;
  bool pending_ = false;
};

class BinaryReader final : public TupleReader {
 public:
  BinaryReader(std::FILE* stream, std::string name) : stream_(stream), name_(std::move(name)), live_(is_live(stream)) {
    char header[24];
    read_exact(header, sizeof header, "the header");
    if (std::memcmp(header, kMagic, sizeof kMagic) != 0) fail(0, "not a simkit tuple stream (.sks)");
    if (XXH3_64bits(header, 16) != detail::load<std::uint64_t>(header + 16)) fail(16, "header checksum mismatch");
    const auto version = detail::load<std::uint32_t>(header + 8);
    if (version != kVersion) fail(8, fmt::format("version {} (this simkit reads version {})", version, kVersion));
    columns_ = detail::load<std::uint32_t>(header + 12);
    if (columns_ == 0) fail(12, "a stream of zero columns");
    if (columns_ > kBlockValues) fail(12, fmt::format("{} columns is more than this simkit takes", columns_));
  }

  std::size_t columns() const override { return columns_; }
  bool live() const override { return live_; }

  std::size_t next(std::vector<double>& out, std::size_t max_rows) override {
    out.clear();
    std::size_t rows = 0;
    while (rows < max_rows) {
      if (taken_ == block_rows_ && !load_block()) break;
      const std::size_t take = std::min(max_rows - rows, block_rows_ - taken_);
      const float* from = block_.data() + taken_ * columns_;
      out.insert(out.end(), from, from + take * columns_);
      taken_ += take;
      rows += take;
      if (live_) break;
    }
    return rows;
  }

 private:
  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
    throw InputError(Location::at_offset(name_, offset), what);
  }

  void read_exact(void* into, std::size_t bytes, const char* what) {
    const std::size_t got = std::fread(into, 1, bytes, stream_);
    if (got != bytes) {
      if (std::ferror(stream_)) fail(offset_ + got, std::string("cannot read: ") + std::strerror(errno));
      fail(offset_ + got, fmt::format("cut short in {}", what));
    }
    offset_ += bytes;
  }

  bool load_block() {
    if (ended_) return false;
    const std::uint64_t start = offset_;
    char head[8];
    read_exact(head, sizeof head, "a block header");
    const auto rows = detail::load<std::uint32_t>(head);
    if (detail::load<std::uint32_t>(head + 4) != 0) fail(start + 4, "bad block header");
    if (rows == 0) {
      ended_ = true;
      if (std::fgetc(stream_) != EOF) fail(offset_, "bytes after the end block");
      return false;
    }
    if (rows > kBlockValues / columns_) fail(start, fmt::format("a block of {} rows is too large", rows));
    block_.resize(std::size_t{rows} * columns_);
    read_exact(block_.data(), block_.size() * sizeof(float), "a block");
    char sum[8];
    read_exact(sum, sizeof sum, "a block checksum");
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    XXH3_64bits_update(state, head, sizeof head);
    XXH3_64bits_update(state, block_.data(), block_.size() * sizeof(float));
    const std::uint64_t hash = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    if (hash != detail::load<std::uint64_t>(sum)) fail(start, "block checksum mismatch (damaged file)");
    for (std::size_t i = 0; i < block_.size(); ++i)
      if (!std::isfinite(block_[i]))
        fail(start + 8 + i * sizeof(float), fmt::format("row {} column {}: NaN or infinite value",
                                                        first_row_ + i / columns_ + 1, i % columns_ + 1));
    first_row_ += rows;
    block_rows_ = rows;
    taken_ = 0;
    return true;
  }

  std::FILE* stream_;
  std::string name_;
  bool live_;
  std::size_t columns_ = 0;
  std::uint64_t offset_ = 0;
  std::vector<float> block_;
  std::size_t block_rows_ = 0, taken_ = 0;
  std::uint64_t first_row_ = 0;
  bool ended_ = false;
};

class ZipReader final : public TupleReader {
 public:
  ZipReader(std::vector<std::unique_ptr<TupleReader>> readers, std::vector<std::string> names)
      : readers_(std::move(readers)), names_(std::move(names)) {
    for (const auto& r : readers_) {
      columns_ += r->columns();
      live_ = live_ || r->live();
    }
    parts_.resize(readers_.size());
  }
  std::size_t columns() const override { return columns_; }
  bool live() const override { return live_; }

  std::size_t next(std::vector<double>& out, std::size_t max_rows) override {
    out.clear();
    // Each reader gives the same number of rows: the first sets it, the others are
    // asked for exactly that many (a live reader gives one at a time).
    std::size_t rows = 0;
    for (std::size_t i = 0; i < readers_.size(); ++i) {
      std::size_t got = 0;
      parts_[i].clear();
      const std::size_t want = i == 0 ? max_rows : rows;
      std::vector<double> piece;
      while (got < want) {
        const std::size_t n = readers_[i]->next(piece, want - got);
        if (n == 0) break;
        parts_[i].insert(parts_[i].end(), piece.begin(), piece.end());
        got += n;
      }
      if (i == 0) {
        rows = got;
      } else if (got != rows) {
        throw InputError(Location{got < rows ? names_[i] : names_[0]},
                         fmt::format("ends after {} tuples, before {} does", done_ + std::min(got, rows),
                                     got < rows ? names_[0] : names_[i]));
      }
    }
    if (rows == 0) {
      // The first reader ended: every other must end too.
      std::vector<double> piece;
      for (std::size_t i = 1; i < readers_.size(); ++i)
        if (readers_[i]->next(piece, 1) != 0)
          throw InputError(Location{names_[0]}, fmt::format("ends after {} tuples, before {} does", done_, names_[i]));
      return 0;
    }
    out.resize(rows * columns_);
    std::size_t offset = 0;
    for (std::size_t i = 0; i < readers_.size(); ++i) {
      const std::size_t width = readers_[i]->columns();
      for (std::size_t r = 0; r < rows; ++r)
        std::copy_n(parts_[i].data() + r * width, width, out.data() + r * columns_ + offset);
      offset += width;
    }
    done_ += rows;
    return rows;
  }

 private:
  std::vector<std::unique_ptr<TupleReader>> readers_;
  std::vector<std::string> names_;
  std::vector<std::vector<double>> parts_;
  std::size_t columns_ = 0;
  std::uint64_t done_ = 0;
  bool live_ = false;
};

// Owns the FILE it reads (closing it at the end) unless it is standard input.
class OwningReader final : public TupleReader {
 public:
  OwningReader(std::FILE* stream, std::unique_ptr<TupleReader> inner) : stream_(stream), inner_(std::move(inner)) {}
  ~OwningReader() override {
    inner_.reset();
    if (stream_ != stdin) std::fclose(stream_);
  }
  std::size_t columns() const override { return inner_->columns(); }
  bool live() const override { return inner_->live(); }
  std::size_t next(std::vector<double>& out, std::size_t max_rows) override { return inner_->next(out, max_rows); }

 private:
  std::FILE* stream_;
  std::unique_ptr<TupleReader> inner_;
};

}  // namespace

std::vector<std::size_t> parse_columns(const std::string& text) {
  std::vector<std::size_t> columns;
  const auto number = [&](std::string_view part) {
    std::size_t value = 0;
    auto [end, err] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || err != std::errc() || end != part.data() + part.size() || value > (1u << 24))
      throw UsageError("column list " + quote(text) + ": expected ranges such as 0-255 or 3,5,9-12 (0-based)");
    return value;
  };
  std::string_view rest(text);
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    const std::size_t dash = part.find('-');
    const std::size_t first = number(part.substr(0, dash));
    const std::size_t last = dash == std::string_view::npos ? first : number(part.substr(dash + 1));
    if (last < first) throw UsageError("column list " + quote(text) + ": a range runs backwards");
    for (std::size_t c = first; c <= last; ++c) columns.push_back(c);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return columns;
}

std::unique_ptr<TupleReader> text_reader(std::FILE* stream, std::string name) {
  return std::make_unique<TextReader>(stream, std::move(name));
}

std::unique_ptr<TupleReader> binary_reader(std::FILE* stream, std::string name) {
  return std::make_unique<BinaryReader>(stream, std::move(name));
}

std::unique_ptr<TupleReader> open_reader(const std::string& path) {
  std::FILE* stream = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (stream == nullptr) throw FileError(Location{path}, std::string("cannot open: ") + std::strerror(errno), errno);
  try {
    // Peek at the first byte: .sks starts with 'S', a number never does.
    const int first = std::fgetc(stream);
    if (first != EOF) std::ungetc(first, stream);
    std::unique_ptr<TupleReader> inner;
    if (first == 'S') {
      inner = binary_reader(stream, path);
    } else {
      inner = text_reader(stream, path);
    }
    return std::make_unique<OwningReader>(stream, std::move(inner));
  } catch (...) {
    if (stream != stdin) std::fclose(stream);
    throw;
  }
}

std::unique_ptr<TupleReader> zip_readers(std::vector<std::unique_ptr<TupleReader>> readers,
                                         std::vector<std::string> names) {
  return std::make_unique<ZipReader>(std::move(readers), std::move(names));
}

BinaryWriter::BinaryWriter(std::FILE* out, std::size_t columns) : out_(out), columns_(columns) {
  char header[24];
  std::memcpy(header, kMagic, sizeof kMagic);
  const auto version = kVersion;
  const auto width = static_cast<std::uint32_t>(columns);
  std::memcpy(header + 8, &version, 4);
  std::memcpy(header + 12, &width, 4);
  const std::uint64_t hash = XXH3_64bits(header, 16);
  std::memcpy(header + 16, &hash, 8);
  if (std::fwrite(header, 1, sizeof header, out_) != sizeof header) throw Failure("cannot write the stream");
}

void BinaryWriter::add(const double* rows, std::size_t count) {
  for (std::size_t i = 0; i < count * columns_; ++i) {
    pending_.push_back(static_cast<float>(rows[i]));
    if (pending_.size() >= std::max<std::size_t>(1, std::min(kBlockRows, kBlockValues / columns_)) * columns_) flush_block();
  }
}

void BinaryWriter::flush_block() {
  if (pending_.empty()) return;
  const auto rows = static_cast<std::uint32_t>(pending_.size() / columns_);
  char head[8] = {};
  std::memcpy(head, &rows, 4);
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, head, sizeof head);
  XXH3_64bits_update(state, pending_.data(), pending_.size() * sizeof(float));
  const std::uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (std::fwrite(head, 1, 8, out_) != 8 ||
      std::fwrite(pending_.data(), sizeof(float), pending_.size(), out_) != pending_.size() ||
      std::fwrite(&hash, 1, 8, out_) != 8)
    throw Failure("cannot write the stream");
  pending_.clear();
}

void BinaryWriter::finish() {
  flush_block();
  const char end[8] = {};
  if (std::fwrite(end, 1, 8, out_) != 8) throw Failure("cannot write the stream");
}

}  // namespace simkit::cca
