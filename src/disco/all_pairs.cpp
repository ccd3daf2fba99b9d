// Every word's k most similar words on the CPU (dense: BLAS products; sparse: merges),
// or through the GPU engine, via the blocked pairwise engine in symmetric mode; Lin's
// scores or PPMI's cosines (disco/dense.hpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <numeric>
#include <optional>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_sort.h>

#include <cblas.h>

#include "core/blas_kernel.hpp"
#include "core/phase_clock.hpp"
#include "disco/dense.hpp"
#include "disco/gpu.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/threads.hpp"

namespace simkit::disco {

std::vector<std::uint32_t> dense_columns(const Model& model, std::size_t features) {
  if (!model.dense_features.empty() && (features == 0 || features == model.dense_features.size()))
    return model.dense_features;
  if (model.features.empty()) return {};
  // Words having each feature (a word lists a feature once): a count per feature id,
  // counted on all cores.
  const std::uint32_t largest = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, model.features.size(), 1 << 16), std::uint32_t{0},
      [&](const auto& range, std::uint32_t m) {
        for (std::size_t i = range.begin(); i < range.end(); ++i) m = std::max(m, model.features[i]);
        return m;
      },
      [](std::uint32_t a, std::uint32_t b) { return std::max(a, b); });
  std::vector<std::pair<std::uint32_t, std::uint32_t>> all;  // (feature, words having it)
  const std::size_t id_count = static_cast<std::size_t>(largest) + 1;
  if (largest <= 4 * model.features.size() + (1u << 20)) {
    const std::vector<std::uint32_t> words_having = detail::count_keys(model.features.data(), model.features.size(), id_count);
    for (std::uint32_t f = 0; f <= largest; ++f)
      if (words_having[f] > 0) all.emplace_back(f, words_having[f]);
  } else {
    // Ids far sparser than the entries: counted as runs of the sorted ids instead.
    std::vector<std::uint32_t> ids = model.features;
    tbb::parallel_sort(ids.begin(), ids.end());
    for (std::size_t i = 0; i < ids.size();) {
      std::size_t j = i;
      while (j < ids.size() && ids[j] == ids[i]) ++j;
      all.emplace_back(ids[i], static_cast<std::uint32_t>(j - i));
      i = j;
    }
  }
  const auto more_common = [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; };
  if (features != 0 && features < all.size()) {
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(features), all.end(), more_common);
    all.resize(features);
  } else {
    std::sort(all.begin(), all.end(), more_common);
  }
  std::vector<std::uint32_t> out;
  out.reserve(all.size());
  for (const auto& [f, n] : all) out.push_back(f);
  return out;
}

void make_dense(Model& model, std::size_t features) {
  model.dense_features.clear();
  model.dense.clear();
  if (features == 0) return;
  model.dense_features = dense_columns(model, features);
  const detail::DenseRows rows(model, features);
  model.dense.assign(model.size() * rows.width, 0.0f);
  for (std::size_t w = 0; w < model.size(); ++w)
    rows.for_each(model, w, [&](std::size_t c, float mi) { model.dense[w * rows.width + c] = mi; });
}

namespace {

// One worker's lists: the pairs of `job` (its a_rows share, or all) on the CPU or
// options.device; `dense`: the dense form's rows (shared by a process's workers), or null.
TopKLists all_pairs_on(const Model& model, const AllPairsOptions& options, const PairwiseJob& job,
                       const detail::DenseRows* dense, double* device_ms) {
  const auto sparse = [&] {
    return pairwise_cpu(job, [&](RowRange a, RowRange b, float* out, std::size_t ld) {
             for (std::size_t i = a.begin; i < a.end; ++i)
               for (std::size_t j = b.begin; j < b.end; ++j)
                 out[(i - a.begin) * ld + (j - b.begin)] = static_cast<float>(similarity(model, i, j));
           }).topk;
  };
  if (options.form == Form::sparse)
    return options.device >= 0 ? detail::all_pairs_sparse_gpu(model, job, options, device_ms) : sparse();
  const detail::DenseRows& rows = *dense;
  if (rows.width == 0) return sparse();  // no features at all: every score is 0 either way
  if (options.device >= 0) return detail::all_pairs_gpu(model, rows, job, options, device_ms);
  const std::size_t width = rows.row_width(rows.width);
  use_single_threaded_blas();  // parallelism comes from the engine's threads
  return pairwise_cpu(job, [&](RowRange a, RowRange b, float* out, std::size_t ld) {
           thread_local std::vector<float> left, right;
           left.resize(a.size() * width);
           right.resize(b.size() * width);
           rows.write(model, a.begin, a.size(), true, left.data(), rows.width);
           rows.write(model, b.begin, b.size(), false, right.data(), rows.width);
           cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(a.size()), static_cast<int>(b.size()),
                       static_cast<int>(width), 1.0f, left.data(), static_cast<int>(width), right.data(),
                       static_cast<int>(width), 0.0f, out, static_cast<int>(ld));
           if (rows.cosine) return;  // unit rows: the products are the cosines
           for (std::size_t i = 0; i < a.size(); ++i)
             for (std::size_t j = 0; j < b.size(); ++j) {
               const float d = rows.sums[a.begin + i] + rows.sums[b.begin + j];
               float& s = out[i * ld + j];
               s = d > 0 ? s / d : 0.0f;
             }
         }).topk;
}

}  // namespace

void prepare_gpu(const AllPairsOptions& options, int device) {
  // A small Lin model (512 words, 16 of 256 features each) through the job's own path.
  constexpr std::size_t kWords = 512, kPerWord = 16, kFeatures = 256;
  Model tiny;
  std::uint32_t state = 12345;
  const auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  for (std::size_t w = 0; w < kWords; ++w) {
    tiny.words.push_back("w" + std::to_string(w));
    tiny.counts.push_back(1);
    std::vector<std::uint32_t> picked;
    while (picked.size() < kPerWord) {
      const std::uint32_t f = next() % kFeatures;
      if (std::find(picked.begin(), picked.end(), f) == picked.end()) picked.push_back(f);
    }
    std::sort(picked.begin(), picked.end());
    double sum = 0, squares = 0;
    for (const std::uint32_t f : picked) {
      const float mi = 0.1f + static_cast<float>(next() >> 8) / 16777216.0f;
      tiny.features.push_back(f);
      tiny.mi.push_back(mi);
      sum += mi;
      squares += static_cast<double>(mi) * mi;
    }
    tiny.offsets.push_back(tiny.features.size());
    tiny.mi_sums.push_back(sum);
    tiny.norms.push_back(std::sqrt(squares));
  }
  tiny.feature_words = kFeatures;
  AllPairsOptions mine = options;
  mine.device = device;
  mine.devices.clear();
  mine.memory_budget = 0;
  mine.features = 0;
  PairwiseJob job;
  job.rows_a = job.rows_b = kWords;
  job.k = std::clamp<std::size_t>(options.k, 1, 16);
  job.symmetric = true;
  job.exclude_self = true;
  if (options.form == Form::sparse) {
    detail::all_pairs_sparse_gpu(tiny, job, mine, nullptr);
  } else {
    const detail::DenseRows rows(tiny, 0);
    detail::all_pairs_gpu(tiny, rows, job, mine, nullptr);
  }
}

struct PreparedRows {
  const Model* model = nullptr;  // the model and the options' features the rows were made for
  std::size_t features = 0;
  detail::DenseRows rows;
};

std::shared_ptr<const PreparedRows> prepare_rows(const Model& model, const AllPairsOptions& options, bool for_gpu) {
  if (options.form == Form::sparse) return nullptr;
  auto prepared = std::make_shared<PreparedRows>(PreparedRows{&model, options.features, detail::DenseRows(model, options.features)});
  if (for_gpu) prepared->rows.entries(model);
  return prepared;
}

void page_lock_rows(const PreparedRows& prepared, int device) {
  detail::lock_entries(*prepared.model, prepared.rows, device);
}

std::size_t columns_of(const PreparedRows& prepared) { return prepared.rows.width; }

TopKLists all_pairs(const Model& model, const AllPairsOptions& options, Progress* progress, double* device_ms,
                    const PreparedRows* prepared) {
  if (model.size() > 0xFFFFFFFEull) throw Failure("too many words for 32-bit indices");
  PairwiseJob job;
  job.rows_a = job.rows_b = model.size();
  job.k = options.k;
  job.symmetric = true;
  job.exclude_self = true;
  job.memory_budget = options.memory_budget;
  job.progress = progress;
  std::vector<int> gpus = options.devices;
  if (gpus.empty() && options.device >= 0) gpus.push_back(options.device);
  const cluster::Parts parts = cluster::parts(gpus.empty() ? 1 : gpus.size());
  PhaseClock clock("disco");
  std::optional<detail::DenseRows> dense;
  const detail::DenseRows* rows = nullptr;
  if (options.form != Form::sparse) {
    if (prepared != nullptr && prepared->model == &model && prepared->features == options.features) {
      rows = &prepared->rows;
    } else {
      rows = &dense.emplace(model, options.features);
      clock.mark("dense columns and row sums");
    }
  }
  if (parts.total == 1) {
    TopKLists lists = all_pairs_on(model, options, job, rows, device_ms);
    clock.mark("the lists");
    return lists;
  }
  if (options.kernel == ProductKernel::simkit)
    throw UsageError("--kernel simkit scores a whole matrix on one GPU; with several GPUs or ranks use --kernel cublas");
  // A worker a GPU of this process (or the CPU), each with its share of the words.
  std::vector<TopKLists> lists(parts.local);
  std::vector<double> ms(parts.local, 0);
  run_parts(parts.local, [&](std::size_t p) {
    PhaseClock worker("disco worker", static_cast<int>(p));
    PairwiseJob mine = job;
    mine.a_rows = share_blocks(model.size(), detail::kGpuTileRows, Share{parts.first + p, parts.total});
    AllPairsOptions on = options;
    on.kernel = ProductKernel::cublas;
    on.device = gpus.empty() ? -1 : gpus[p];
    on.devices.clear();
    lists[p] = all_pairs_on(model, on, mine, rows, &ms[p]);
    worker.mark("its lists (its device memory freed)");
  });
  if (device_ms != nullptr) *device_ms = *std::max_element(ms.begin(), ms.end());
  clock.mark("the workers' lists");
  for (std::size_t p = 1; p < lists.size(); ++p) merge_topk(lists[0], lists[p]);
  TopKLists all = gather_topk(std::move(lists[0]));
  clock.mark("merged and gathered");
  return all;
}

}  // namespace simkit::disco
