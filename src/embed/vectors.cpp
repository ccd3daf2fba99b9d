// Corpus -> PPMI (disco::build, measure ppmi) -> truncated SVD -> word vectors.
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "simkit/cluster.hpp"
#include "simkit/embed.hpp"
#include "simkit/error.hpp"
#include "embed/svd.hpp"

namespace simkit::embed {

namespace {

// What can be refused before the corpus is read.
void check(const Options& options) {
  if (!(options.eig >= 0 && options.eig <= 1)) throw UsageError("--eig must be in [0, 1]");
  if (options.svd.rank == 0) throw UsageError("--dim must be at least 1");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Options default_options() {
  Options o;
  o.counting.measure = disco::Measure::ppmi;
  o.counting.window = 6;  // five context words on each side
  o.counting.ppmi.alpha = 1;  // no smoothing: measured better than 0.75 on this corpus (docs/embed.md)
  o.counting.ppmi.shift = 1;
  o.counting.ppmi.weighted = true;
  o.counting.stopwords = "none";
  o.counting.min_count = 2;
  o.svd.rank = 300;
  o.svd.oversampling = 10;
  o.svd.power_iterations = 2;
  o.eig = 0.5;
  o.add_contexts = true;
  return o;
}

Vectors vectors(const disco::Model& ppmi, const Options& options, Svd* svd_out) {
  if (ppmi.measure != disco::Measure::ppmi)
    throw UsageError("word vectors come from a PPMI model (disco build --measure ppmi)");
  check(options);
  const CsrView a{ppmi.size(), ppmi.feature_words, ppmi.offsets.data(), ppmi.features.data(), ppmi.mi.data()};
  Svd svd = truncated_svd(a, options.svd);
  Vectors out;
  out.words = ppmi.words;
  out.dim = svd.rank;
  out.singular_values = svd.s;
  out.values.assign(ppmi.size() * svd.rank, 0.0f);
  // U S^p (+ V S^p of the same words: a word's id is its context id, words being the most
  // frequent first), a row at a time.
  std::vector<float> scale(svd.rank);
  for (std::size_t i = 0; i < svd.rank; ++i)
    scale[i] = options.eig == 0 ? 1.0f : static_cast<float>(std::pow(static_cast<double>(svd.s[i]), options.eig));
  tbb::parallel_for(std::size_t{0}, ppmi.size(), [&](std::size_t w) {
    const float* u = svd.u.data() + w * svd.rank;
    const float* v = svd.v.data() + w * svd.rank;
    float* row = out.values.data() + w * svd.rank;
    for (std::size_t i = 0; i < svd.rank; ++i) row[i] = (options.add_contexts ? u[i] + v[i] : u[i]) * scale[i];
  });
  if (svd_out != nullptr) *svd_out = std::move(svd);
  return out;
}

disco::Model count(const std::vector<std::string>& files, const Options& options, Progress* progress) {
  check(options);
  disco::BuildOptions counting = options.counting;
  counting.measure = disco::Measure::ppmi;
  return disco::build(files, counting, progress);
}

void prepare_device(const SvdOptions& options) {
  if (options.device < 0) return;
  try {
    detail::warm_up_gpu(options, options.rank + options.oversampling);
  } catch (const std::exception&) {
  }
}

Vectors vectors_of_counts(const disco::Model& counts, const std::string& corpus, const Options& options,
                          Timings* timings) {
  if (counts.size() == 0) throw InputError(Location{corpus}, "the corpus has no word that could be paired");
  const std::size_t need = options.svd.rank + options.svd.oversampling;
  if (counts.size() < need)
    throw InputError(Location{corpus},
                     fmt::format("the corpus gives {} words, too few for --dim {} (a rank-{} SVD with {} oversampling "
                                 "needs {} words): use a larger corpus or a smaller --dim",
                                 counts.size(), options.svd.rank, options.svd.rank, options.svd.oversampling, need));
  const auto start = std::chrono::steady_clock::now();
  Svd svd;
  Vectors out = vectors(counts, options, &svd);
  if (timings != nullptr) {
    timings->svd_s = seconds_since(start);
    timings->svd_device_ms = svd.device_ms;
    timings->words = counts.size();
    timings->nonzeros = counts.features.size();
  }
  return out;
}

Vectors train(const std::vector<std::string>& files, const Options& options, Progress* progress, Timings* timings) {
  check(options);
  const auto start = std::chrono::steady_clock::now();
  disco::Model counts;
  double count_s = 0;
  {
    std::jthread ready;  // the GPU readied while the host counts
    if (options.svd.device >= 0 && cluster::root()) ready = std::jthread([&] { prepare_device(options.svd); });
    counts = count(files, options, progress);
    count_s = seconds_since(start);
  }
  if (!cluster::root()) return {};  // under mpirun: every rank counts, root does the rest
  Vectors out = vectors_of_counts(counts, files.empty() ? "" : files[0], options, timings);
  if (timings != nullptr) timings->count_s = count_s;
  return out;
}

neighbors::Model as_model(const Vectors& vectors) {
  return neighbors::make_model(vectors.words, vectors.values, vectors.dim, "embed");
}

}  // namespace simkit::embed
