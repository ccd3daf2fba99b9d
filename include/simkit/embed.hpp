// Word vectors from a corpus's counts, the count-based way that matches neural
// embeddings (Levy, Goldberg and Dagan 2015): the PPMI matrix of word-context pairs
// (simkit::disco's counting, measure ppmi), then its truncated SVD by randomized range
// finding (Halko, Martinsson and Tropp 2011), the vectors U_d S_d^p, plus the context
// vectors V_d S_d^p when asked (their "w+c"). The SVD runs on the CPU (Eigen's sparse
// products, OpenBLAS's LAPACK) or a GPU (cuSPARSE, cuSOLVER, cuBLAS) from the same test
// matrix, so both give the same vectors up to each dimension's sign and rounding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "simkit/disco.hpp"
#include "simkit/neighbors.hpp"

namespace simkit {
class Progress;
}

namespace simkit::embed {

// A sparse matrix in compressed rows (views; the caller keeps the arrays alive): row i's
// entries are columns[offsets[i] .. offsets[i + 1]) with values[...], columns ascending.
struct CsrView {
  std::size_t rows = 0, cols = 0;
  const std::uint64_t* offsets = nullptr;  // rows + 1
  const std::uint32_t* columns = nullptr;
  const float* values = nullptr;
};

struct SvdOptions {
  std::size_t rank = 300;          // d, the singular triplets kept
  std::size_t oversampling = 10;   // extra columns of the sketch (l = d + oversampling)
  int power_iterations = 2;        // q: the sketch is (A A^T)^q A Omega, re-orthonormalised each step
  std::uint64_t seed = 1;          // the test matrix Omega (a hash of seed and place: any device makes the same)
  int device = -1;                 // CUDA device; -1 = the CPU (embed::count: it counts the pairs too)
};

// The d largest singular triplets, A ~ U diag(s) V^T: u rows x d and v cols x d,
// row-major; s descending. Each (u_i, v_i) pair is determined up to a common sign.
struct Svd {
  std::size_t rows = 0, cols = 0, rank = 0;
  std::vector<float> u, s, v;
  double device_ms = -1;  // the GPU's time (CUDA events), when it ran there
};

// Randomized truncated SVD (Halko et al. 2011, algorithms 4.4 and 5.1): Y = A Omega with
// Omega cols x l uniform in [-1, 1), q power iterations (Q = orth(Y), Z = orth(A^T Q),
// Y = A Z), Q = orth(Y); then Z = A^T Q (= B^T, B = Q^T A), B B^T = Z^T Z = W L W^T in
// float64, s = sqrt(L), U = Q W, V = Z W / s. Throws UsageError when l exceeds the
// smaller side of A (the matrix is too small for that rank).
Svd truncated_svd(const CsrView& a, const SvdOptions& options);

// The d x d block l used: d + oversampling (validated against A's shape), for messages.
std::size_t sketch_width(const CsrView& a, const SvdOptions& options);

struct Options {
  // Counting and PPMI: disco's (measure ppmi). Note disco's window: each word pairs with
  // window - 1 words on each side.
  disco::BuildOptions counting;
  SvdOptions svd;
  double eig = 0.5;           // p: vectors U S^p (0: U alone; Levy et al. found 0 or 0.5 best)
  bool add_contexts = true;   // w + c: add the context vectors V S^p of the same words
};

// The defaults `simkit embed` uses (docs/embed.md: each chosen on the public gold
// standards): window 6 (five words each side), distance weights, alpha 1, min count 2, ...
Options default_options();

struct Vectors {
  std::vector<std::string> words;  // most frequent first (disco's order)
  std::vector<float> values;       // words x dim, row-major
  std::size_t dim = 0;
  std::vector<float> singular_values;
};

// Vectors from a PPMI model (disco::build with measure ppmi): its rows are the words, its
// features the contexts. Refuses (UsageError) a model of another measure, and one too
// small for the rank, in one line.
Vectors vectors(const disco::Model& ppmi, const Options& options, Svd* svd = nullptr);

// What train() measured, for --timings.
struct Timings {
  double count_s = 0, svd_s = 0, svd_device_ms = -1;
  disco::BuildTimings counting;  // count_s's steps
  std::size_t words = 0, nonzeros = 0;
};

// Counts the corpus (disco::build), then vectors(). Refuses a corpus too small for the
// rank with InputError naming the corpus. With a GPU (options.svd.device), the device is
// readied (prepare_device) while the host counts.
Vectors train(const std::vector<std::string>& files, const Options& options, Progress* progress = nullptr,
              Timings* timings = nullptr);

// train()'s steps, for callers that overlap them with work of their own:
// the corpus's PPMI counts (disco::build with the options' counting, measure ppmi; the
// pairs counted on options.svd.device's GPU unless counting.device_after_first_pass); under
// mpirun every rank counts its share and only root gets the model (others: empty);
disco::Model count(const std::vector<std::string>& files, const Options& options, Progress* progress = nullptr,
                   disco::BuildTimings* timings = nullptr);
// readies CUDA device options.device for the SVD (its context, the libraries' kernels run
// once on a small matrix), to run while the host counts; errors are left for the SVD
// itself to report, and without CUDA it does nothing;
void prepare_device(const SvdOptions& options);
// the vectors of the counts, with train()'s refusal of a corpus too small for the rank
// (naming `corpus`) and its timings (not count_s).
Vectors vectors_of_counts(const disco::Model& counts, const std::string& corpus, const Options& options,
                          Timings* timings = nullptr);

// The vectors as a neighbors::Model (for saving in any format, or searching in place).
neighbors::Model as_model(const Vectors& vectors);

}  // namespace simkit::embed
