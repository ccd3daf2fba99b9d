// Searcher: the model's rows shared out among the workers of the run (one a GPU, or the
// CPU, in each process under mpirun), queries in batches, each worker's best rows merged
// into one list, the query's own words removed from its answers (as gensim's
// most_similar does).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <optional>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <fmt/format.h>

#include "core/phase_clock.hpp"
#include "neighbors/search_backends.hpp"
#include "simkit/cluster.hpp"
#include "simkit/device.hpp"
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

GpuSplit parse_gpu_split(std::string_view name) {
  if (name == "auto") return GpuSplit::Automatic;
  if (name == "rows") return GpuSplit::Rows;
  if (name == "queries") return GpuSplit::Queries;
  throw UsageError(fmt::format("--gpu-split {}: expected auto, rows or queries", quote(name)));
}

std::string_view gpu_split_name(GpuSplit split) {
  switch (split) {
    case GpuSplit::Automatic: return "auto";
    case GpuSplit::Rows: return "rows";
    case GpuSplit::Queries: return "queries";
  }
  return "?";
}

namespace detail {

bool use_replicas(GpuSplit split, std::size_t gpus, std::size_t index_bytes, std::size_t smallest_free) {
  if (gpus < 2 || split == GpuSplit::Rows) return false;
  return split == GpuSplit::Queries || index_bytes <= smallest_free / 2;
}

bool split_by_queries(GpuSplit split, std::size_t queries, std::size_t gpus) {
  return split == GpuSplit::Queries || queries >= gpus * kQueriesPerGpu;
}

void place_rows(TopKLists& into, std::size_t first_row, const TopKLists& part) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, part.rows, 1024), [&](const auto& range) {
    for (std::size_t q = range.begin(); q < range.end(); ++q) {
      std::copy_n(part.row_scores(q).begin(), part.k, into.scores.begin() + (first_row + q) * into.k);
      std::copy_n(part.row_indices(q).begin(), part.k, into.indices.begin() + (first_row + q) * into.k);
    }
  });
}

}  // namespace detail

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

// Each query's first k listed rows that keep(query, row) accepts, on all cores.
template <typename Keep>
std::vector<std::vector<Match>> answers_of(const TopKLists& found, std::size_t k, Keep&& keep) {
  PhaseClock clock("neighbors");
  std::vector<std::vector<Match>> answers(found.rows);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, found.rows, 256), [&](const auto& range) {
    for (std::size_t q = range.begin(); q < range.end(); ++q) {
      const auto scores = found.row_scores(q);
      const auto rows = found.row_indices(q);
      answers[q].reserve(std::min(k, found.k));
      for (std::size_t i = 0; i < found.k && answers[q].size() < k && rows[i] != kNoIndex; ++i)
        if (keep(q, rows[i])) answers[q].push_back(Match{rows[i], scores[i]});
    }
  });
  clock.mark("answers");
  return answers;
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
  // A part's work in one batch: its queries, and the rows of its view it scores.
  struct Task {
    RowRange queries;
    RowRange rows;
  };
  const Model& model;
  SearchOptions options;
  std::vector<std::unique_ptr<Part>> parts;
  cluster::Parts workers;   // this process's parts among every rank's
  bool replicated = false;  // every worker of every rank holds the whole model
  double last_ms = 0;
  double setup_ms = 0;

  // Shards score every query against their own rows; replicas take a share of the queries
  // (a large batch) or of the rows they all hold (a small one), by their number among all
  // ranks' workers (the ranks' lists are then merged as shards' are: the rows a rank did
  // not answer are empty).
  std::vector<Task> tasks_for(std::size_t queries) const {
    const std::size_t total = workers.total;
    const bool by_queries = replicated && detail::split_by_queries(options.gpu_split, queries, total);
    std::vector<Task> tasks(parts.size());
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const std::size_t held = parts[p]->rows.size(), worker = workers.first + p;
      if (by_queries)
        tasks[p] = {share_rows(queries, false, worker, total), {0, held}};
      else
        tasks[p] = {{0, queries}, replicated ? share_rows(held, false, worker, total) : RowRange{0, held}};
    }
    return tasks;
  }

  // The k best rows of every direction over this process's parts, in model rows.
  TopKLists run_local(const float* directions, std::size_t queries, std::size_t k) {
    PhaseClock clock("neighbors");
    const std::vector<Task> tasks = tasks_for(queries);
    std::vector<TopKLists> found(parts.size());
    std::vector<double> ms(parts.size(), 0);
    const auto run_part = [&](std::size_t p) {
      Part& part = *parts[p];
      const Task& task = tasks[p];
      const std::size_t kp = std::min(k, task.rows.size());
      if (kp == 0 || task.queries.size() == 0) return;
      const float* mine = directions + task.queries.begin * model.dim;
      if (part.gpu) {
        found[p] = detail::search_gpu(*part.gpu, mine, task.queries.size(), kp, &ms[p], task.rows);
      } else {
        const auto start = std::chrono::steady_clock::now();
        found[p] = detail::search_cpu(part.cpu, mine, task.queries.size(), kp, options.memory_budget);
        ms[p] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      }
    };
    run_parts(parts.size(), run_part);  // a thread a GPU
    last_ms = *std::max_element(ms.begin(), ms.end());
    clock.mark("the workers' lists");
    // Each part's lists in model rows, k wide; a share of the queries put in place, a
    // share of the rows merged.
    std::optional<TopKLists> out;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      TopKLists& part = found[p];
      if (part.rows == 0) continue;
      if (const std::size_t first = parts[p]->rows.begin + tasks[p].rows.begin; first > 0)
        for (std::uint32_t& row : part.indices)
          if (row != kNoIndex) row = static_cast<std::uint32_t>(row + first);
      if (part.k != k) {  // a part of fewer than k rows
        TopKLists widened(part.rows, k);
        detail::place_rows(widened, 0, part);
        part = std::move(widened);
      }
      if (part.rows != queries) {  // a share of the queries
        if (!out) out.emplace(queries, k);
        detail::place_rows(*out, tasks[p].queries.begin, part);
        continue;
      }
      if (out)
        merge_topk(*out, part);
      else
        out = std::move(part);
    }
    clock.mark("merged");
    return out ? std::move(*out) : TopKLists(queries, k);
  }

  // The k best rows of every direction over the whole model: on rank 0; elsewhere empty.
  TopKLists run(const float* directions, std::size_t queries, std::size_t k) {
    return gather_topk(run_local(directions, queries, k));
  }
};

Searcher::Searcher(const Model& model, const SearchOptions& options)
    : impl_(std::make_unique<Impl>(Impl{model, options, {}, {}, false, 0, 0})) {
  if (options.k == 0) throw UsageError("--k must be at least 1");
  // A worker a GPU (or the CPU) in each process, numbered across the ranks; each takes its
  // share of the model's rows, so that N GPUs each hold 1/N of it; or, as replicas, every
  // GPU of every rank holds the whole model (GpuSplit).
  const std::vector<int> gpus = options.device.cuda ? options.device.indices : std::vector<int>{};
  const std::size_t local = options.device.cuda ? std::max<std::size_t>(gpus.size(), 1) : 1;
  const cluster::Parts parts = impl_->workers = cluster::parts(local);
  const auto device_of = [&](std::size_t p) { return gpus.empty() ? options.device.index : gpus[p]; };
  if (parts.total > 1 && options.gpu_split != GpuSplit::Rows) {
    // Every rank takes part (the smallest free memory of all): they must choose alike. A
    // rank on the CPU offers none, so that the CPU's workers keep shards. Workers sharing
    // a GPU (two indices of this process, or more ranks on the host than it has GPUs)
    // count their share of its memory.
    std::size_t smallest_free = 0;
    if (options.device.cuda) {  // (a CPU rank leaves the GPUs' driver alone)
      smallest_free = ~std::size_t{0};
      const auto host_gpus = static_cast<std::size_t>(std::max(cuda_device_count(), 1));
      const std::size_t ranks_a_gpu = (static_cast<std::size_t>(cluster::local_size()) + host_gpus - 1) / host_gpus;
      for (std::size_t p = 0; p < local; ++p) {
        const auto sharing = static_cast<std::size_t>(
            std::count_if(gpus.begin(), gpus.end(), [&](int g) { return g == device_of(p); }));
        smallest_free =
            std::min(smallest_free, gpu_memory(device_of(p)).free / std::max<std::size_t>(sharing, 1) / ranks_a_gpu);
      }
    }
    if (options.memory_budget != 0) smallest_free = std::min(smallest_free, options.memory_budget);
    smallest_free = cluster::min(smallest_free);
    impl_->replicated = smallest_free > 0 &&
                        detail::use_replicas(options.gpu_split, parts.total,
                                             detail::gpu_index_bytes(model, options.precision), smallest_free);
  }
  impl_->parts.resize(local);
  for (std::size_t p = 0; p < local; ++p) {
    auto part = std::make_unique<Impl::Part>();
    part->rows = impl_->replicated ? RowRange{0, model.rows} : share_rows(model.rows, false, parts.first + p, parts.total);
    part->view = rows_of(model, part->rows);
    impl_->parts[p] = std::move(part);
  }
  if (!options.device.cuda) {
    impl_->parts[0]->cpu = detail::make_cpu_index(impl_->parts[0]->view);
    return;
  }
  std::vector<double> setup(local, 0);
  const auto make_index = [&](std::size_t p) {
    Impl::Part& part = *impl_->parts[p];
    SearchOptions mine = options;
    mine.device.index = device_of(p);
    mine.device.indices = {mine.device.index};
    part.gpu = detail::make_gpu_index(part.view, mine);
    setup[p] = detail::gpu_setup_ms(*part.gpu);
  };
  // The GPUs' uploads at the same time; one after another where indices share a GPU, so
  // that each sees the memory the ones before it took when it decides what stays there.
  std::vector<int> distinct = gpus;
  std::sort(distinct.begin(), distinct.end());
  if (std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end())
    run_parts(local, make_index);
  else
    for (std::size_t p = 0; p < local; ++p) make_index(p);
  impl_->setup_ms = *std::max_element(setup.begin(), setup.end());
}

Searcher::~Searcher() = default;

const SearchOptions& Searcher::options() const { return impl_->options; }
double Searcher::last_search_ms() const { return impl_->last_ms; }
double Searcher::setup_ms() const { return impl_->setup_ms; }
bool Searcher::replicated() const { return impl_->replicated; }

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
  std::vector<std::exception_ptr> refused(queries.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, queries.size(), 64), [&](const auto& range) {
    for (std::size_t q = range.begin(); q < range.end(); ++q) try {
        const std::vector<float> v = query_vector(model, queries[q], queries[q].text);
        std::copy(v.begin(), v.end(), directions.begin() + q * model.dim);
      } catch (...) {
        refused[q] = std::current_exception();
      }
  });
  for (const std::exception_ptr& e : refused)  // the first refused query, as one at a time would
    if (e) std::rethrow_exception(e);
  std::size_t most_excluded = 0;
  for (const Query& query : queries) most_excluded = std::max(most_excluded, query.terms.size());
  // Ask for enough extra rows that k remain after removing the query's own words.
  const std::size_t wanted = std::min(model.rows, k + most_excluded);
  const TopKLists found = impl_->run(directions.data(), queries.size(), wanted);
  if (found.rows == 0) return std::vector<std::vector<Match>>(queries.size());  // not rank 0: rank 0 answers
  return answers_of(found, k, [&](std::size_t q, std::uint32_t row) {
    return std::none_of(queries[q].terms.begin(), queries[q].terms.end(),
                        [&](const QueryTerm& t) { return t.row == row; });
  });
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
  if (found.rows == 0) return std::vector<std::vector<Match>>(queries);  // not rank 0
  return answers_of(found, k, [](std::size_t, std::uint32_t) { return true; });
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
