// DISCO distributional word similarity (seed 000, chapter 3): window co-occurrence
// triples <w1, r, w2> counted over a corpus, their mutual information (formula 3.7),
// and Lin's similarity of two words' positive-MI feature sets (formula 3.8). Or, on the
// same counts, the PPMI measure (Levy, Goldberg and Dagan 2015): word-context counts at
// any distance up to the window, positive PMI with context-distribution smoothing and an
// optional shift, compared by cosine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simkit/io.hpp"
#include "simkit/topk.hpp"
#include "simkit/wordsim.hpp"

namespace simkit {
class Progress;
}

namespace simkit::disco {

// How a model weighs a word's company and compares two words:
//   lin   features (r, w'): the relation r (signed distance) and the word w' there, of
//         positive MI (formula 3.7); Lin's measure (formula 3.8). The seed's.
//   ppmi  features w': a context word at any distance up to the window; positive PMI
//         with context-distribution smoothing and an optional shift,
//           PPMI(w, c) = max(0, ln( #(w,c) x sum_c' #(c')^alpha / (#(w) x #(c)^alpha) ) - ln k),
//         #(w) and #(c) the count matrix's row and column sums; cosine of two words' rows.
enum class Measure { lin, ppmi };
// "lin" or "ppmi"; throws UsageError naming --measure otherwise.
Measure parse_measure(const std::string& name);
const char* measure_name(Measure measure);

// The PPMI measure's parameters (Levy, Goldberg and Dagan 2015's cds, neg and dyn).
struct PpmiOptions {
  double alpha = 0.75;      // context-distribution smoothing: #(c)^alpha (1 = none)
  double shift = 1;         // k: ln k subtracted from every PMI (1 = no shift)
  bool weighted = false;    // a context at distance d counts (L - d + 1) / L, L = window - 1
                            // (word2vec's dynamic window in expectation); else 1
};

struct BuildOptions {
  Measure measure = Measure::lin;
  PpmiOptions ppmi;                 // measure ppmi only
  int window = 4;                   // each word pairs with the window - 1 words on each side
  bool keep_case = false;           // else words are lower-cased
  // "" = the measure's default: the bundled English list for lin, none for ppmi (whose
  // PMI weighs frequent words down itself; measured: docs/disco.md); "none"; "english"
  // (the bundled list); or a file (a word a line).
  std::string stopwords;
  // Subsampling of frequent words (word2vec's, as Levy et al. measured it): before the
  // windows, a token of a word of corpus frequency f > t is dropped with probability
  // 1 - sqrt(t / f), so that windows reach past it; decided by a hash of (seed, file,
  // line, position), so runs repeat exactly on any number of threads. 0 = none.
  double subsample = 0;
  std::uint64_t seed = 1;
  std::uint64_t min_count = 1;      // words seen fewer times are dropped (as words and as features)
  std::size_t words = 0;            // the N most frequent words get feature vectors; 0 = all
  std::size_t features = 0;         // > 0: also the dense form over the F features most words have
  TextFormat format = TextFormat::automatic;  // text files, or Wikipedia XML dumps
  // Memory for the triple counts (0: half the machine's); beyond it counts spill to
  // sorted temporary files ($TMPDIR) and merge at the end: exact either way.
  std::size_t memory_budget = 0;
  // CUDA device that counts the window pairs (-1: the CPU). The model is the same either
  // way; the CPU counts a corpus whose words pass 1 cannot keep (more than an eighth of
  // the budget), or without CUDA it says so.
  int device = -1;
  // When set, called once the first pass (the word counts) is done, in place of `device`:
  // so that a device being started on another thread is waited for only then.
  std::function<int()> device_after_first_pass;
};

// The sparse ("compressed") MI matrix: word i's features are features[offsets[i] ..
// offsets[i + 1]), ascending, with weights mi[...] (all > 0): MI for lin, PPMI for ppmi.
// Lin: a feature (r, w) is w * relations + slot, slot 0..relations-1 standing for
// r = -(window-1)..-1, 1..window-1. PPMI: a feature is the context word's id w
// (relations() = 1).
struct Model {
  Measure measure = Measure::lin;
  PpmiOptions ppmi;                       // ppmi: the parameters it was counted with
  double subsample = 0;                   // the build's subsampling threshold (0: none)
  int window = 4;
  bool keep_case = false;                 // words kept as written (else lower-cased)
  std::vector<std::string> words;         // the N words with vectors, most frequent first (ties: byte order)
  std::vector<std::uint64_t> counts;      // their corpus counts
  std::uint64_t feature_words = 0;        // words that may be features (every word kept)
  std::vector<std::uint64_t> offsets{0};  // N + 1
  std::vector<std::uint32_t> features;
  std::vector<float> mi;
  std::vector<double> mi_sums;            // sum of word i's weights (Lin's denominator's terms)
  std::vector<double> norms;              // Euclidean norm of word i's weights (cosine's)
  // The dense (column-reduced) form, when the model keeps one: its F columns (feature
  // ids, as dense_columns() chose them) and the N x F MI matrix, row-major, 0 where a word
  // lacks a column's feature.
  std::vector<std::uint32_t> dense_features;
  std::vector<float> dense;

  int relations() const noexcept { return measure == Measure::ppmi ? 1 : 2 * (window - 1); }
  std::size_t size() const noexcept { return words.size(); }
  // The row of `word` as written (linear search), or nullopt.
  std::optional<std::size_t> find(std::string_view word) const;
};

// A word as the model spells it: lower-cased unless the model keeps case.
std::string model_form(const Model& model, std::string_view word);

// The row of a word a user typed (in model_form).
// Throws InputError naming the word (and `what`, e.g. the file and line it came from)
// when the vocabulary lacks it.
std::size_t lookup(const Model& model, std::string_view word, const std::string& what = "");

// Counts the corpus (UTF-8 text files, plain or .gz/.bz2/.zst, read as streams, or
// Wikipedia XML dumps, whose articles' text counts, a paragraph a line; a sentence never
// crosses a line end; words as simkit::Tokenizer splits them) and computes the MI of
// every triple (lin) or the PPMI of every word-context pair (ppmi), keeping values > 0.
// Under mpirun every rank counts its share of the corpus (a piece in N) and root gets the
// summed counts and the model, byte for byte one process's; the other ranks get an empty
// model.
// `timings`, when given, receives the seconds each step took.
struct BuildTimings {
  double words_s = 0;   // pass 1: the text split into words, the words counted
  double pairs_s = 0;   // pass 2: the window pairs counted (device >= 0: on the GPU)
  double scores_s = 0;  // the MI or PPMI of every pair, the model's rows
  bool on_device = false;
  double device_wait_s = 0;    // of pairs_s: waiting for the device (device_after_first_pass)
  double pairs_device_ms = 0;  // of pairs_s: the device's kernels
};
Model build(const std::vector<std::string>& files, const BuildOptions& options, Progress* progress = nullptr,
            BuildTimings* timings = nullptr);

// Fills mi_sums and norms from the weights (after the sparse matrix changes).
void compute_sums(Model& model);

// The model's similarity of words a and b: Lin's (formula 3.8) or the cosine of their
// PPMI rows; 0 when either has no features.
double similarity(const Model& model, std::size_t a, std::size_t b);

struct Neighbour {
  std::size_t word = 0;
  double score = 0;
};
// The k words most similar to `word` (itself excluded), best first, ties by lower index.
std::vector<Neighbour> most_similar(const Model& model, std::size_t word, std::size_t k);

// All pairs: every word's k most similar words by the model's measure, through the
// pairwise engine. For ppmi read cosine where Lin's terms stand below: the rows are A
// scaled to unit length (over the chosen columns), the product A.A^T, no division.
//   dense  the column-reduced form: the `features` features (r, w) that most words have
//          (ties by feature id; 0 or more than there are = every feature), A the N x F
//          matrix of their MI values and M its 0/1 pattern; the numerator A.M^T + M.A^T is
//          one product [A|M].[M|A]^T (BLAS on the CPU, cuBLAS on the GPU), divided by
//          s_i + s_j, the row sums of A. With every feature it equals the sparse form.
//          On a GPU, fp32 runs as split TF32 (A = hi + lo; fp32 accuracy) when the rows
//          and A's low parts fit half the memory budget, else on the CUDA cores; tf32 as
//          TF32; fp16 with the rows stored as IEEE halves (10 fraction bits, rounded, as
//          TF32 keeps; MI values from 6.1e-5 to 65504 keep them all), products summed in
//          fp32, twice TF32's tensor-core rate. `kernel` and `precision` matter only for
//          the dense form on a GPU.
//   sparse the compressed form, every feature: on the CPU two sorted feature lists merged
//          a pair; on a GPU the numerators summed from the features' inverted lists.
enum class Form { dense, sparse };
// What scores the dense form on a GPU in tf32 or fp16: cuBLAS (the pairwise engine:
// products into score tiles, a division pass, then the selection) or simkit's fused
// self-join (Hopper GPUs, k <= 16: each pair multiplied once on tensor cores, the division
// and each tile's top k in the kernel's epilogue; no score is written). automatic: both
// timed on the first 8,192 words (or all), the self-join kept only when 10% faster; fp32
// always uses cuBLAS.
enum class ProductKernel { automatic, cublas, simkit };
// The dense form's arithmetic on a GPU (see Form).
enum class Precision { fp32, tf32, fp16 };
struct AllPairsOptions {
  std::size_t k = 10;
  Form form = Form::dense;
  std::size_t features = 0;
  int device = -1;              // CUDA device; -1 = the CPU
  std::vector<int> devices;     // several GPUs of this process (device: the first); empty: just `device`
  Precision precision = Precision::fp32;  // GPU, dense: the products' arithmetic
  ProductKernel kernel = ProductKernel::automatic;
  std::size_t memory_budget = 0;
};
// The dense form's columns: feature ids, most common first (ties by lower id); the
// model's own dense columns when it keeps a dense form and `features` is 0 or its F.
std::vector<std::uint32_t> dense_columns(const Model& model, std::size_t features);
// Makes (or drops, for 0) the model's dense form over `features` columns.
void make_dense(Model& model, std::size_t features);
// Rows are words, best first, ties by lower index (the more frequent word); a word never
// lists itself. `device_ms`, when given, receives the GPU engine's time.
// The words are shared out among the run's workers (each GPU of `devices`, or the CPU, in
// each rank under mpirun; include/simkit/cluster.hpp) in ranges dealt back and forth
// (share_blocks, simkit/pairwise.hpp), so that each scores nearly the same pairs,
// and the lists come back together on rank 0 (other ranks get empty lists). With several
// workers the dense form goes through cuBLAS (the fused self-join takes a whole matrix).
// `prepared`: the rows prepare_rows made of this model for these options, or null (made here).
struct PreparedRows;
TopKLists all_pairs(const Model& model, const AllPairsOptions& options, Progress* progress = nullptr,
                    double* device_ms = nullptr, const PreparedRows* prepared = nullptr);

// The dense form's rows of `model` for all_pairs with these options (its columns, every
// word's sum and, with `for_gpu`, the entries a GPU scatters into its rows), made on all
// cores ahead of the job: a program that waits for its GPU to start makes them meanwhile.
// Null for the sparse form. Valid while `model` is.
std::shared_ptr<const PreparedRows> prepare_rows(const Model& model, const AllPairsOptions& options, bool for_gpu);
// Prepared rows' entries (made `for_gpu`) page-locked, once a process, through GPU
// `device`'s context, made here if the driver has not made it yet, so that each GPU's
// upload of them runs at the link's rate: what all_pairs does first otherwise, done by a
// program while its GPUs start. Leaves `device` current on the calling thread. Throws
// Failure where the device cannot be used; does nothing in a CPU-only build.
void page_lock_rows(const PreparedRows& prepared, int device);
// The dense columns of prepared rows (dense_columns(model, features).size()).
std::size_t columns_of(const PreparedRows& prepared);

// Readies GPU `device` for all_pairs with these options (its context made, cuBLAS and
// the kernels the job runs loaded) by running a small model through the same path, so
// that a program can do it on a thread of its own while it reads the real model.
void prepare_gpu(const AllPairsOptions& options, int device);

// Spearman's rho of the model's similarities against a word-similarity gold standard
// (simkit/wordsim.hpp), over the pairs whose both words the model has (`covered` of
// `pairs`); words in model_form.
wordsim::Evaluation evaluate(const Model& model, const std::vector<wordsim::GoldPair>& gold);

// simkit's model file (.skd; docs/formats.md): magic, version, sizes, vocabulary,
// counts, the sparse matrix, the dense form when kept, the measure and its parameters,
// a checksum in pieces. Versions 1 (no dense section), 2 (no measure: Lin) and 3 (one
// XXH3 pass as its checksum) are read too.
void write_model(const Model& model, const std::string& path);
Model read_model(const std::string& path);
Model parse_model(std::string_view bytes, const std::string& name);

// The bundled English stop words (lower case).
std::span<const std::string_view> english_stopwords();

}  // namespace simkit::disco
