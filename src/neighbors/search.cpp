// Searcher: the model's rows shared out among the workers of the run (one a GPU, or the
// CPU, in each process under mpirun), queries in batches, each worker's best rows merged
// into one list, the query's own words removed from its answers (as gensim's
// most_similar does).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "neighbors/search_backends.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/neighbors.hpp"
#include "simkit/threads.hpp"

namespace simkit::neighbors {

Precision parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "tf32") return Precision::Tf32;
  if (name == "fp16") return Precision::Fp16;
  if (name == "bf16") return Precision::Bf16;
  throw UsageError(fmt::format("--precision {}: expected fp32, tf32, fp16 or bf16", quote(name)));
}

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::Fp32: return "fp32";
    case Precision::Tf32: return "tf32";
    case Precision::Fp16: return "fp16";
    case Precision::Bf16: return "bf16";
  }
  return "?";
}

namespace {

// The rows [rows.begin, rows.end) of a model as a model of their own, for a back end
// (which reads only rows, dim, vectors and norms); its row r is the model's rows.begin + r.
Model rows_of(const Model& model, RowRange rows) {
  Model view = model;
  view.rows = rows.size();
  view.vectors = model.vectors + rows.begin * model.dim;
  view.norms = model.norms + rows.begin;
  return view;
}

}  // namespace

struct Searcher::Impl {
  // One worker's rows of the model, on the CPU or one GPU.
  struct Part {
    RowRange rows;
    Model view;  // rows_of(model, rows); the back ends keep a reference to it
    detail::CpuIndex cpu;
    detail::GpuIndexPtr gpu;
  };
  const Model& model;
  SearchOptions options;
  std::vector<std::unique_ptr<Part>> parts;
  double last_ms = 0;
  double setup_ms = 0;

  // The k best rows of every direction over this process's parts, in model rows.
  TopKLists run_local(const float* directions, std::size_t queries, std::size_t k) {
    std::vector<TopKLists> found(parts.size());
    std::vector<double> ms(parts.size(), 0);
    const auto run_part = [&](std::size_t p) {
      Part& part = *parts[p];
      const std::size_t kp = std::min(k, part.rows.size());
      if (kp == 0) return;
      if (part.gpu) {
        found[p] = detail::search_gpu(*part.gpu, directions, queries, kp, &ms[p]);
      } else {
        const auto start = std::chrono::steady_clock::now();
        found[p] = detail::search_cpu(part.cpu, directions, queries, kp, options.memory_budget);
        ms[p] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      }
    };
    run_parts(parts.size(), run_part);  // a thread a GPU
    last_ms = *std::max_element(ms.begin(), ms.end());
    // Each part's lists in model rows, k wide, merged.
    std::optional<TopKLists> out;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      TopKLists& part = found[p];
      if (part.rows == 0) continue;
      if (const std::size_t first = parts[p]->rows.begin; first > 0)
        for (std::uint32_t& row : part.indices)
          if (row != kNoIndex) row = static_cast<std::uint32_t>(row + first);
      if (part.k != k) {  // a part of fewer than k rows
        TopKLists widened(queries, k);
        for (std::size_t q = 0; q < queries; ++q) {
          std::copy_n(part.row_scores(q).begin(), part.k, widened.scores.begin() + q * k);
          std::copy_n(part.row_indices(q).begin(), part.k, widened.indices.begin() + q * k);
        }
        part = std::move(widened);
      }
      if (out)
        merge_topk(*out, part);
      else
        out = std::move(part);
    }
    return out ? std::move(*out) : TopKLists(queries, k);
  }

  // The k best rows of every direction over the whole model: on rank 0; elsewhere empty.
  TopKLists run(const float* directions, std::size_t queries, std::size_t k) {
    return gather_topk(run_local(directions, queries, k));
  }
};

Searcher::Searcher(const Model& model, const SearchOptions& options)
    : impl_(std::make_unique<Impl>(Impl{model, options, {}, 0, 0})) {
  if (options.k == 0) throw UsageError("--k must be at least 1");
  // A worker a GPU (or the CPU) in each process, numbered across the ranks; each takes its
  // share of the model's rows, so that N GPUs each hold 1/N of it.
  const std::vector<int> gpus = options.device.cuda ? options.device.indices : std::vector<int>{};
  const std::size_t local = options.device.cuda ? std::max<std::size_t>(gpus.size(), 1) : 1;
  const cluster::Parts parts = cluster::parts(local);
  for (std::size_t p = 0; p < local; ++p) {
    auto part = std::make_unique<Impl::Part>();
    part->rows = share_rows(model.rows, false, parts.first + p, parts.total);
    part->view = rows_of(model, part->rows);
    if (options.device.cuda) {
      SearchOptions mine = options;
      mine.device.index = gpus.empty() ? options.device.index : gpus[p];
      mine.device.indices = {mine.device.index};
      part->gpu = detail::make_gpu_index(part->view, mine);
      impl_->setup_ms = std::max(impl_->setup_ms, detail::gpu_setup_ms(*part->gpu));
    } else {
      part->cpu = detail::make_cpu_index(part->view);
    }
    impl_->parts.push_back(std::move(part));
  }
}

Searcher::~Searcher() = default;

const SearchOptions& Searcher::options() const { return impl_->options; }
double Searcher::last_search_ms() const { return impl_->last_ms; }
double Searcher::setup_ms() const { return impl_->setup_ms; }

std::vector<std::vector<Match>> Searcher::search(std::span<const Query> queries) {
  return search(queries, impl_->options.k);
}

std::vector<std::vector<Match>> Searcher::search_vectors(std::span<const float> directions,
                                                         std::size_t queries) {
  return search_vectors(directions, queries, impl_->options.k);
}

std::vector<std::vector<Match>> Searcher::search(std::span<const Query> queries, std::size_t k) {
  if (k == 0) throw UsageError("--k must be at least 1");
  const Model& model = impl_->model;
  std::vector<float> directions(queries.size() * model.dim);
  std::size_t most_excluded = 0;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const std::vector<float> v = query_vector(model, queries[q], queries[q].text);
    std::copy(v.begin(), v.end(), directions.begin() + q * model.dim);
    most_excluded = std::max(most_excluded, queries[q].terms.size());
  }
  // Ask for enough extra rows that k remain after removing the query's own words.
  const std::size_t wanted = std::min(model.rows, k + most_excluded);
  const TopKLists found = impl_->run(directions.data(), queries.size(), wanted);

  std::vector<std::vector<Match>> answers(queries.size());
  if (found.rows == 0) return answers;  // not rank 0: the answers are rank 0's to give
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const auto scores = found.row_scores(q);
    const auto rows = found.row_indices(q);
    for (std::size_t i = 0; i < wanted && answers[q].size() < k; ++i) {
      if (rows[i] == kNoIndex) break;
      const bool own = std::any_of(queries[q].terms.begin(), queries[q].terms.end(),
                                   [&](const QueryTerm& t) { return t.row == rows[i]; });
      if (!own) answers[q].push_back(Match{rows[i], scores[i]});
    }
  }
  return answers;
}

std::vector<std::vector<Match>> Searcher::search_vectors(std::span<const float> directions,
                                                         std::size_t queries, std::size_t wanted) {
  if (wanted == 0) throw UsageError("--k must be at least 1");
  const Model& model = impl_->model;
  if (directions.size() != queries * model.dim)
    throw UsageError(fmt::format("search_vectors: {} values for {} queries of dimension {}",
                                 directions.size(), queries, model.dim));
  const std::size_t k = std::min(wanted, model.rows);
  const TopKLists found = impl_->run(directions.data(), queries, k);
  std::vector<std::vector<Match>> answers(queries);
  if (found.rows == 0) return answers;  // not rank 0
  for (std::size_t q = 0; q < queries; ++q)
    for (std::size_t i = 0; i < k && found.row_indices(q)[i] != kNoIndex; ++i)
      answers[q].push_back(Match{found.row_indices(q)[i], found.row_scores(q)[i]});
  return answers;
}

void prepare_gpu(const SearchOptions& options, int device, std::size_t dim) {
  // Enough rows and queries for the paths a real batch takes (a single query's scan, and
  // a batch's GEMM and filter), straight on the back end: no collectives, so it may run
  // beside the caller's own.
  constexpr std::size_t kRows = 4096, kQueries = 16;
  std::vector<std::string> words(kRows);
  std::vector<float> values(kRows * dim);
  std::uint32_t state = 12345;
  for (std::size_t r = 0; r < kRows; ++r) words[r] = "w" + std::to_string(r);
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
  }
  const Model tiny = make_model(std::move(words), std::move(values), dim, "warm-up");
  SearchOptions mine = options;
  mine.device.cuda = true;
  mine.device.index = device;
  mine.device.indices = {device};
  mine.memory_budget = 0;
  const detail::GpuIndexPtr index = detail::make_gpu_index(tiny, mine);
  const std::size_t k = std::min<std::size_t>(options.k, kRows);
  double ms = 0;
  for (const std::size_t queries : {std::size_t{1}, kQueries})
    detail::search_gpu(*index, tiny.vectors, queries, k, &ms);
}

bool same_answers(std::span<const Match> a, std::span<const Match> b, float tolerance) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  // Rank by rank the similarities agree; a row may then sit at another rank only among
  // near-equal similarities, which rounding may order either way.
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i].similarity - b[i].similarity) <= tolerance)) return false;
  const auto score_in = [](std::span<const Match> list, std::uint32_t row) -> std::optional<float> {
    for (const Match& m : list)
      if (m.row == row) return m.similarity;
    return std::nullopt;
  };
  const auto consistent = [&](std::span<const Match> x, std::span<const Match> y) {
    for (const Match& m : x) {
      const std::optional<float> other = score_in(y, m.row);
      if (other ? !(std::fabs(*other - m.similarity) <= tolerance)
                : !(m.similarity <= y.back().similarity + tolerance))
        return false;  // a row missing from y must sit at y's cut-off
    }
    return true;
  };
  return consistent(a, b) && consistent(b, a);
}

}  // namespace simkit::neighbors
