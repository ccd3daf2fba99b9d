// Owned storage for models read from text or binary formats, and the checks every
// reader shares (words, values, duplicates) once the rows are in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/neighbors.hpp"

namespace simkit::neighbors::detail {

struct ModelData {
  std::vector<float> vectors;
  // Vectors used in place from a memory-mapped file (then `vectors` stays empty).
  MappedFile mapped;
  const float* external_vectors = nullptr;
  std::vector<float> norms;
  std::string words;
  std::vector<std::uint64_t> offsets;  // rows + 1
  std::vector<std::uint32_t> sorted;
};

// Where row `row` came from, for messages (a line, or a byte offset).
using RowLocator = std::function<Location(std::size_t row)>;

// Checks words (non-empty, UTF-8, no control characters), refuses duplicate words,
// computes norms and the sorted index, and returns the Model that views `data`.
Model finish_model(std::shared_ptr<ModelData> data, std::size_t rows, std::size_t dim,
                   Format format, const std::string& source, const RowLocator& locate);

// Runs check(r) for every row r < rows on all cores; check throws InputError for a bad
// row. Throws the lowest bad row's error, as a loop in order would.
void check_rows(std::size_t rows, const std::function<void(std::size_t row)>& check);

// Refuses a word that cannot be printed on one line of a TSV file.
void check_word(std::string_view word, const RowLocator& locate, std::size_t row);

// Sorts row numbers by their words (byte order); throws InputError at the later of two
// equal words.
std::vector<std::uint32_t> sorted_index(const Model& model, const RowLocator& locate);

// Norms of all rows (float32 of a float64 sum), computed in parallel; throws InputError at
// a row whose norm overflows float32.
std::vector<float> row_norms(const Model& model, const RowLocator& locate);

// Refuses shapes that cannot be real: zero or absurd sizes.
void check_shape(std::uint64_t rows, std::uint64_t dim, const Location& where);

// The `rows dim` line that starts word2vec files.
struct CountHeader {
  std::uint64_t rows = 0;
  std::uint64_t dim = 0;
  std::size_t body = 0;  // offset of the byte after the header's newline
};
CountHeader read_count_header(std::string_view text, const std::string& path);

// Splits a line into fields separated by runs of blanks (space, tab, CR).
std::size_t split_fields(std::string_view line, std::vector<std::string_view>& fields);

// Readers of each format (file already opened). All throw InputError with positions.
Model read_text(const MappedFile& file, Format format, Progress* progress);
Model read_word2vec_binary(const MappedFile& file, Progress* progress);
// `words` is the word list; nullptr when none was given.
Model read_npy(const MappedFile& file, const MappedFile* words, Progress* progress);
// `background`: the checksum is verified in the background, from a thread of its own
// (Model::pending_check).
Model read_skv(const MappedFile& file, Progress* progress, bool background);

void write_text(const Model& model, OutputFile& out, Format format, Progress* progress);
void write_word2vec_binary(const Model& model, OutputFile& out, Progress* progress);
void write_skv(const Model& model, OutputFile& out, Progress* progress);
// The matrix as '<f4' .npy into out, the words (one a line) into words.
void write_npy(const Model& model, OutputFile& out, OutputFile& words, Progress* progress);

}  // namespace simkit::neighbors::detail
