// Nearest word vectors: load word-vector models in the common formats, parse queries
// (a word, or words joined by + and -), and find the k most cosine-similar words on
// the CPU or a GPU with the same answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simkit/device.hpp"
#include "simkit/wordsim.hpp"

namespace simkit {
class Progress;
}

namespace simkit::neighbors {

enum class Format { Auto, Glove, Word2VecText, Word2VecBinary, Npy, Skv };

// "auto", "glove", "word2vec", "word2vec-binary", "npy", "skv".
Format parse_format(std::string_view name);
std::string_view format_name(Format format);

// A word-vector model: `rows` words, each with `dim` float32 values and their norm.
// Rows keep the order of the source file. The data may live in a memory-mapped file.
struct Model {
  std::size_t rows = 0;
  std::size_t dim = 0;
  const float* vectors = nullptr;            // rows x dim, row-major
  const float* norms = nullptr;              // Euclidean norm of each row
  const char* word_bytes = nullptr;          // all words back to back
  const std::uint64_t* word_offsets = nullptr;  // rows + 1 offsets into word_bytes
  const std::uint32_t* sorted = nullptr;     // row numbers in byte order of their words
  Format format = Format::Auto;              // the format it was read from
  std::string source;                        // the path it was read from
  std::shared_ptr<const void> storage;       // keeps the memory above alive
  // A check still running on a thread of its own (LoadOptions::check_in_background).
  std::shared_future<void> pending_check;

  std::string_view word(std::size_t row) const {
    return {word_bytes + word_offsets[row], word_offsets[row + 1] - word_offsets[row]};
  }
  std::span<const float> vector(std::size_t row) const { return {vectors + row * dim, dim}; }
  // Binary search in the sorted index.
  std::optional<std::uint32_t> find(std::string_view word) const;
  // Waits for a check left running by LoadOptions::check_in_background and throws its
  // InputError when the file failed it; returns at once when none is pending.
  void wait_checked() const;
};

struct LoadOptions {
  Format format = Format::Auto;  // Auto: detected from the content
  std::string words_path;        // the word list of an .npy matrix (one word a line)
  Progress* progress = nullptr;  // advanced by bytes read
  // .skv: verify the whole file's checksum in the background (version 2's pieces on every
  // core, from a thread of its own) while the caller goes on
  // (uploads the model, searches): the structure is checked before load_model returns,
  // the checksum when Model::wait_checked() is called, which must come before any answer
  // is trusted or written.
  bool check_in_background = false;
};

// Reads a model; refuses malformed input with InputError naming file, position, reason.
Model load_model(const std::string& path, const LoadOptions& options = {});

// Reads a model from bytes in memory; `name` stands for the file in messages, and an
// .npy matrix takes its word list (one word a line) from `words`.
Model load_model_from_memory(std::string_view bytes, const std::string& name, Format format = Format::Auto,
                             std::string_view words = {});

// Detects the format of a file from its first bytes (never Auto; throws InputError for
// empty or unrecognisable files).
Format detect_format(std::string_view head, const std::string& path);

// Writes a model in `format` (Glove, Word2VecText, Word2VecBinary, Skv, or Npy with its
// word list, one a line, at `words_path`), atomically. Text formats print each value in
// the shortest form that reads back bit-exactly.
void save_model(const Model& model, const std::string& path, Format format,
                Progress* progress = nullptr, const std::string& words_path = "");

// The format a file name's extension stands for: .skv, .txt (GloVe), .vec (word2vec
// text), .bin (word2vec binary), .npy; Auto for any other.
Format format_of_extension(std::string_view path);

// A model built in memory (tests, conversions): checks words and values like the readers.
Model make_model(std::vector<std::string> words, std::vector<float> vectors, std::size_t dim,
                 const std::string& source = "memory");

// ------------------------------------------------------------------ queries

struct QueryTerm {
  std::uint32_t row = 0;
  float weight = 1;  // +1 or -1
};

// A parsed query: "king - man + woman" -> king(+1) man(-1) woman(+1).
struct Query {
  std::string text;              // the tokens joined by single spaces
  std::vector<QueryTerm> terms;
};

// Parses one query. Tokens are separated by white space; "+" and "-" are operators,
// words side by side are added. A token such as "-man" that is not itself a word is read
// as an operator and a word. Throws InputError (with `where` as location) for an empty
// query, a dangling operator or an unknown word (naming it).
Query parse_query(std::string_view line, const Model& model, const std::string& where);

// The query's direction as gensim's most_similar computes it: the mean of the terms'
// unit vectors times their weights, normalised. Throws InputError if it is zero.
std::vector<float> query_vector(const Model& model, const Query& query, const std::string& where);

// ------------------------------------------------------------------ evaluation

// Spearman's rho of the cosine similarities of word pairs against a gold standard
// (simkit/wordsim.hpp), over the pairs whose both words the model has, spelled exactly
// as in the gold file (the rest count as not covered).
wordsim::Evaluation evaluate(const Model& model, const std::vector<wordsim::GoldPair>& gold);

// The cosine similarity of two rows (float64 sums; 0 when either is a zero vector).
double cosine(const Model& model, std::uint32_t a, std::uint32_t b);

// ------------------------------------------------------------------ search

enum class Precision { Fp32, Tf32, Fp16, Bf16 };
Precision parse_precision(std::string_view name);
std::string_view precision_name(Precision precision);

// How N GPUs (of one process, or of every rank under mpirun) share a batch, as FAISS's
// shards and replicas do. Rows: each GPU holds 1/N of the model and scores every query
// against it, and the lists are merged (what a model larger than one GPU needs).
// Queries: each GPU holds the whole model and answers 1/N of every batch (no merge, and
// no share of the costs a GPU pays a batch whatever its rows). Automatic: each GPU holds
// the whole model where it (with the fp16 copy an fp32/tf32 search filters on) takes at
// most half of a GPU's free memory (its share of it where workers share a GPU; at most
// --memory-budget), and a batch of kQueriesPerGpu queries a GPU or more is shared by
// queries, a smaller one by rows of the model they all hold; Rows otherwise. The CPU's
// workers always share by rows.
enum class GpuSplit { Automatic, Rows, Queries };
GpuSplit parse_gpu_split(std::string_view name);
std::string_view gpu_split_name(GpuSplit split);
inline constexpr std::size_t kQueriesPerGpu = 1024;

struct SearchOptions {
  std::size_t k = 10;
  Device device;                   // CPU or CUDA device
  Precision precision = Precision::Fp32;  // GPU only; the CPU always computes in fp32
  std::size_t memory_budget = 0;   // bytes; 0 = automatic
  GpuSplit gpu_split = GpuSplit::Automatic;  // several GPUs only
};

struct Match {
  std::uint32_t row = 0;
  float similarity = 0;
};

// Holds a model ready for search and answers batches of queries. Each answer lists up to
// k rows best first (ties: lower row first), without the query's own words.
// The model's rows are shared out among the run's workers: each GPU of
// options.device.indices (on a GPU: its rows uploaded once), or the CPU, in each process
// under mpirun (include/simkit/cluster.hpp); so N GPUs hold 1/N of the model each, unless
// options.gpu_split gives every GPU the whole model (replicas, see GpuSplit). Every rank calls search() with the same queries; the answers come back on
// rank 0 (the other ranks get empty lists). The answers are the same whatever the split.
class Searcher {
 public:
  Searcher(const Model& model, const SearchOptions& options);
  ~Searcher();
  Searcher(const Searcher&) = delete;
  Searcher& operator=(const Searcher&) = delete;

  std::vector<std::vector<Match>> search(std::span<const Query> queries);
  // Searches raw directions (queries x dim), excluding nothing: each score is the
  // direction's dot product with the unit row (the cosine for unit directions).
  std::vector<std::vector<Match>> search_vectors(std::span<const float> directions,
                                                 std::size_t queries);
  // The same with `k` answers a query instead of options().k (the model stays where it is).
  std::vector<std::vector<Match>> search(std::span<const Query> queries, std::size_t k);
  std::vector<std::vector<Match>> search_vectors(std::span<const float> directions, std::size_t queries,
                                                 std::size_t k);

  const SearchOptions& options() const;
  // Milliseconds the last search took on its device (CUDA events on a GPU).
  double last_search_ms() const;
  // Milliseconds spent preparing the model on the device (upload and conversion).
  double setup_ms() const;
  // Whether every GPU holds the whole model (GpuSplit).
  bool replicated() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Readies GPU `device` for a Searcher with these options (its context made, cuBLAS and
// the kernels a search runs loaded) by searching a small model of `dim` columns, so that
// a program can do it on a thread of its own while it reads the real model.
void prepare_gpu(const SearchOptions& options, int device, std::size_t dim = 300);

// Whether two answer lists agree: the same rows in the same order, except where
// neighbouring similarities differ by less than `tolerance` (near-ties may swap).
bool same_answers(std::span<const Match> a, std::span<const Match> b, float tolerance);

}  // namespace simkit::neighbors
