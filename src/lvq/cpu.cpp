// The CPU path: distances through BLAS (|x|^2 + |m|^2 - 2 x.m), the genuine/rival search
// on all cores, the updates prototype by prototype in batch order; and prediction. Under
// mpirun each rank is a worker: it scores its share of every batch and the ranks'
// outcomes are summed through MPI (cluster::sum) before every rank applies the updates.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include <cblas.h>
#include <oneapi/tbb/parallel_for.h>

#include "lvq/trainer.hpp"
#include "simkit/cluster.hpp"

namespace simkit::lvq {

namespace detail {

namespace {

float squared_norm(const float* x, std::size_t dims) {
  double s = 0;
  for (std::size_t t = 0; t < dims; ++t) s += static_cast<double>(x[t]) * x[t];
  return static_cast<float>(s);
}

// Rows of `n` at a time keep the distance block near 64 MB.
std::size_t rows_per_block(std::size_t count) { return std::max<std::size_t>(1, (std::size_t{16} << 20) / std::max<std::size_t>(1, count)); }

class CpuTrainer final : public Trainer {
 public:
  CpuTrainer(const Dataset& data, const Model& model, const TrainOptions& options)
      : data_(data), model_(model), options_(options), parts_(cluster::parts(1)), prototypes_(model.prototypes),
        norms_(model.count()), sample_norms_(data.rows) {
    for (std::size_t j = 0; j < model.count(); ++j) norms_[j] = squared_norm(&prototypes_[j * model.dims], model.dims);
    tbb::parallel_for(std::size_t{0}, data.rows,
                      [&](std::size_t r) { sample_norms_[r] = squared_norm(&data.features[r * data.dims], data.dims); });
  }

  void epoch(std::span<const std::uint32_t> order, std::size_t batch, std::span<const float> etas, float* losses,
             std::uint8_t* errors) override {
    for (std::size_t b = 0, first = 0; first < order.size(); ++b, first += batch)
      run_batch(order.subspan(first, std::min(batch, order.size() - first)), etas[b], losses + first, errors + first);
  }

  void read_prototypes(float* out) override { std::copy(prototypes_.begin(), prototypes_.end(), out); }

 private:
  struct Entry {
    std::uint32_t prototype, sample;  // sample: position in the batch
    float coefficient;
  };

  void run_batch(std::span<const std::uint32_t> rows, float eta, float* losses, std::uint8_t* errors) {
    const std::size_t dims = data_.dims, count = model_.count(), per_class = model_.per_class, n = rows.size();
    // Every row of the batch (the updates need them all); distances for this rank's share.
    x_.resize(n * dims);
    for (std::size_t i = 0; i < n; ++i)
      std::copy_n(&data_.features[std::size_t{rows[i]} * dims], dims, &x_[i * dims]);
    const RowRange mine = share_rows(n, false, parts_.first, parts_.total);
    d_.resize(mine.size() * count);
    if (mine.size() > 0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(mine.size()), static_cast<int>(count),
                  static_cast<int>(dims), 1.0f, &x_[mine.begin * dims], static_cast<int>(dims), prototypes_.data(),
                  static_cast<int>(dims), 0.0f, d_.data(), static_cast<int>(count));
    entries_.resize(2 * n);
    tbb::parallel_for(mine.begin, mine.end, [&](std::size_t i) {
      const float* s = &d_[(i - mine.begin) * count];
      const float xn = sample_norms_[rows[i]];
      const std::size_t lo = data_.labels[rows[i]] * per_class, hi = lo + per_class;
      std::uint32_t c = 0, r = 0;
      float dc = std::numeric_limits<float>::infinity(), dr = dc;
      for (std::size_t j = 0; j < count; ++j) {
        const float d = std::max(0.0f, xn + norms_[j] - 2.0f * s[j]);
        if (j >= lo && j < hi) {
          if (d < dc) dc = d, c = static_cast<std::uint32_t>(j);
        } else if (d < dr) {
          dr = d, r = static_cast<std::uint32_t>(j);
        }
      }
      const Outcome o = glvq_outcome(dc, dr, r < c, options_.xi, eta);
      losses[i] = o.loss;
      errors[i] = o.error;
      entries_[2 * i] = {c, static_cast<std::uint32_t>(i), o.towards};
      entries_[2 * i + 1] = {r, static_cast<std::uint32_t>(i), o.away};
    });
    if (parts_.total > 1) exchange(mine, losses, errors);
    // Each prototype takes its samples' updates in batch order; prototypes in parallel.
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.prototype < b.prototype; });
    heads_.clear();
    for (std::size_t e = 0; e < entries_.size(); ++e)
      if (e == 0 || entries_[e].prototype != entries_[e - 1].prototype) heads_.push_back(e);
    heads_.push_back(entries_.size());
    tbb::parallel_for(std::size_t{0}, heads_.size() - 1, [&](std::size_t h) {
      const std::uint32_t j = entries_[heads_[h]].prototype;
      float* m = &prototypes_[std::size_t{j} * dims];
      for (std::size_t e = heads_[h]; e < heads_[h + 1]; ++e) {
        const float a = entries_[e].coefficient;
        const float* x = &x_[std::size_t{entries_[e].sample} * dims];
        for (std::size_t t = 0; t < dims; ++t) m[t] = std::fma(a, x[t] - m[t], m[t]);
      }
      norms_[j] = squared_norm(m, dims);
    });
  }

  // Every rank's outcomes of the batch on every rank: three words a sample (genuine and
  // rival prototype; their coefficients' bits; the loss's bits and the error), this rank's
  // share filled and the rest zero, summed over the ranks. Each word has one non-zero
  // contributor, so the sum is exact.
  void exchange(RowRange mine, float* losses, std::uint8_t* errors) {
    const std::size_t n = entries_.size() / 2;
    words_.assign(3 * n, 0);
    const auto pair = [](std::uint32_t low, std::uint32_t high) { return low | std::uint64_t{high} << 32; };
    for (std::size_t i = mine.begin; i < mine.end; ++i) {
      words_[3 * i] = pair(entries_[2 * i].prototype, entries_[2 * i + 1].prototype);
      words_[3 * i + 1] = pair(std::bit_cast<std::uint32_t>(entries_[2 * i].coefficient),
                               std::bit_cast<std::uint32_t>(entries_[2 * i + 1].coefficient));
      words_[3 * i + 2] = pair(std::bit_cast<std::uint32_t>(losses[i]), errors[i]);
    }
    cluster::sum(std::span<std::uint64_t>(words_));
    const auto low = [](std::uint64_t w) { return static_cast<std::uint32_t>(w); };
    const auto high = [](std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); };
    for (std::size_t i = 0; i < n; ++i) {
      const auto index = static_cast<std::uint32_t>(i);
      entries_[2 * i] = {low(words_[3 * i]), index, std::bit_cast<float>(low(words_[3 * i + 1]))};
      entries_[2 * i + 1] = {high(words_[3 * i]), index, std::bit_cast<float>(high(words_[3 * i + 1]))};
      losses[i] = std::bit_cast<float>(low(words_[3 * i + 2]));
      errors[i] = static_cast<std::uint8_t>(high(words_[3 * i + 2]));
    }
  }

  const Dataset& data_;
  const Model& model_;
  TrainOptions options_;
  cluster::Parts parts_;  // this rank's worker number among the ranks
  std::vector<float> prototypes_, norms_, sample_norms_, x_, d_;
  std::vector<Entry> entries_;
  std::vector<std::size_t> heads_;
  std::vector<std::uint64_t> words_;
};

}  // namespace

std::unique_ptr<Trainer> cpu_trainer(const Dataset& data, const Model& model, const TrainOptions& options) {
  return std::make_unique<CpuTrainer>(data, model, options);
}

void distances_cpu(const float* x, std::size_t n, const Model& model, const float* prototype_norms, float* out) {
  const std::size_t count = model.count(), dims = model.dims;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(count),
              static_cast<int>(dims), 1.0f, x, static_cast<int>(dims), model.prototypes.data(), static_cast<int>(dims),
              0.0f, out, static_cast<int>(count));
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    const float xn = squared_norm(x + i * dims, dims);
    for (std::size_t j = 0; j < count; ++j) out[i * count + j] = std::max(0.0f, xn + prototype_norms[j] - 2.0f * out[i * count + j]);
  });
}

}  // namespace detail

std::vector<std::uint32_t> predict(const Model& model, const Dataset& input, std::size_t top, int device) {
  const RowRange all{0, input.rows};
  if (model.mean.empty()) return detail::nearest_classes(model, input, all, top, device);
  Dataset scaled = input;
  detail::standardise(model, scaled);
  return detail::nearest_classes(model, scaled, all, top, device);
}

std::vector<std::uint32_t> detail::nearest_classes(const Model& model, const Dataset& data, RowRange rows,
                                                   std::size_t top, int device) {
  top = std::min(std::max<std::size_t>(top, 1), model.classes.size());
  if (device >= 0 && detail::gpu_predicts(model)) return detail::predict_gpu(model, data, rows, top, device);
  const std::size_t count = model.count(), classes = model.classes.size(), per_class = model.per_class;
  std::vector<float> norms(count);
  for (std::size_t j = 0; j < count; ++j) norms[j] = detail::squared_norm(&model.prototypes[j * model.dims], model.dims);
  std::vector<std::uint32_t> result(rows.size() * top);
  const std::size_t block = detail::rows_per_block(count);
  std::vector<float> d;
  for (std::size_t first = 0; first < rows.size(); first += block) {
    const std::size_t n = std::min(block, rows.size() - first);
    d.resize(n * count);
    detail::distances_cpu(&data.features[(rows.begin + first) * model.dims], n, model, norms.data(), d.data());
    tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
      std::vector<float> best(classes, std::numeric_limits<float>::infinity());
      for (std::size_t j = 0; j < count; ++j) best[j / per_class] = std::min(best[j / per_class], d[i * count + j]);
      std::vector<std::uint32_t> ids(classes);
      std::iota(ids.begin(), ids.end(), 0u);
      std::partial_sort(ids.begin(), ids.begin() + top, ids.end(), [&](std::uint32_t a, std::uint32_t b) {
        return best[a] < best[b] || (best[a] == best[b] && a < b);
      });
      std::copy_n(ids.begin(), top, &result[(first + i) * top]);
    });
  }
  return result;
}

Scores score(const Model& model, const Dataset& data, const std::vector<std::uint32_t>& predictions, std::size_t top) {
  Scores s;
  const std::size_t classes = model.classes.size();
  s.confusion.assign(classes * classes, 0);
  std::size_t right = 0;
  for (std::size_t r = 0; r < data.rows; ++r) {
    const std::uint32_t guess = predictions[r * top];
    right += guess == data.labels[r];
    ++s.confusion[data.labels[r] * classes + guess];
  }
  s.accuracy = data.rows > 0 ? static_cast<double>(right) / data.rows : 0;
  return s;
}

}  // namespace simkit::lvq
