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

namespace {

// vectors(), and the SVD's time on the device (-1: the CPU) in device_ms when given.
Vectors make_vectors(const disco::Model& ppmi, const Options& options, Svd* svd_out, double* device_ms) {
  if (ppmi.measure != disco::Measure::ppmi)
    throw UsageError("word vectors come from a PPMI model (disco build --measure ppmi)");
  check(options);
  const CsrView a{ppmi.size(), ppmi.feature_words, ppmi.offsets.data(), ppmi.features.data(), ppmi.mi.data()};
  Vectors out;
  out.words = ppmi.words;
  if (svd_out == nullptr && options.svd.device >= 0) {  // made on the device: half the bytes come back
    const detail::WordVectors made{options.eig, options.add_contexts};
    Svd svd = detail::truncated_svd_gpu(a, options.svd, sketch_width(a, options.svd), &made);
    if (device_ms != nullptr) *device_ms = svd.device_ms;
    out.dim = svd.rank;
    out.singular_values = std::move(svd.s);
    out.values = std::move(svd.u);
    return out;
  }
  Svd svd = truncated_svd(a, options.svd);
  if (device_ms != nullptr) *device_ms = svd.device_ms;
  out.dim = svd.rank;
  out.singular_values = svd.s;
  out.values.assign(ppmi.size() * svd.rank, 0.0f);
  // U S^p (+ V S^p of the same words: a word's id is its context id, words being the most
  // frequent first), a row at a time.
  const std::vector<float> scale = detail::eigen_weights(svd.s, options.eig);
  tbb::parallel_for(std::size_t{0}, ppmi.size(), [&](std::size_t w) {
    const float* u = svd.u.data() + w * svd.rank;
    const float* v = svd.v.data() + w * svd.rank;
    float* row = out.values.data() + w * svd.rank;
    for (std::size_t i = 0; i < svd.rank; ++i) row[i] = (options.add_contexts ? u[i] + v[i] : u[i]) * scale[i];
  });
  if (svd_out != nullptr) *svd_out = std::move(svd);
  return out;
}

}  // namespace

Vectors vectors(const disco::Model& ppmi, const Options& options, Svd* svd_out) {
  return make_vectors(ppmi, options, svd_out, nullptr);
}

disco::Model count(const std::vector<std::string>& files, const Options& options, Progress* progress,
                   disco::BuildTimings* timings) {
  check(options);
  disco::BuildOptions counting = options.counting;
  counting.measure = disco::Measure::ppmi;
  if (!counting.device_after_first_pass) counting.device = options.svd.device;  // the SVD's GPU counts too
  return disco::build(files, counting, progress, timings);
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
  double device_ms = -1;
  Vectors out = make_vectors(counts, options, nullptr, &device_ms);
  if (timings != nullptr) {
    timings->svd_s = seconds_since(start);
    timings->svd_device_ms = device_ms;
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
    counts = count(files, options, progress, timings != nullptr ? &timings->counting : nullptr);
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
