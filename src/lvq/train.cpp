// The epoch loop: shuffling, the learning-rate schedule, the per-epoch figures and early
// stopping; the batches themselves run in a CPU or GPU trainer (lvq/trainer.hpp). Under
// mpirun every rank runs this loop with the same seed, so every rank shuffles alike; the
// trainers share each batch among the workers of the run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>

#include "lvq/trainer.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/progress.hpp"

namespace simkit::lvq {

namespace {

// The mean squared distance of the samples to their class means: the data's scale.
double data_scale(const Dataset& data) {
  const std::size_t dims = data.dims;
  std::vector<double> means(data.classes.size() * dims);
  std::vector<std::size_t> sizes(data.classes.size());
  for (std::size_t r = 0; r < data.rows; ++r) {
    ++sizes[data.labels[r]];
    for (std::size_t t = 0; t < dims; ++t) means[data.labels[r] * dims + t] += data.features[r * dims + t];
  }
  for (std::size_t c = 0; c < sizes.size(); ++c)
    for (std::size_t t = 0; t < dims; ++t) means[c * dims + t] /= std::max<std::size_t>(1, sizes[c]);
  double total = 0;
  for (std::size_t r = 0; r < data.rows; ++r)
    for (std::size_t t = 0; t < dims; ++t) {
      const double d = data.features[r * dims + t] - means[data.labels[r] * dims + t];
      total += d * d;
    }
  const double scale = total / data.rows;
  return scale > 0 ? scale : 1.0;
}

// `test` standardised already, as the training data; its rows shared among the workers.
double test_error(const Model& model, const Dataset& test, const std::vector<int>& gpus) {
  const detail::RowsClassified nearest = detail::nearest_classes_here(model, test, 1, gpus);
  std::uint64_t wrong[1] = {0};
  for (std::size_t r = nearest.rows.begin; r < nearest.rows.end; ++r)
    wrong[0] += nearest.classes[r - nearest.rows.begin] != test.labels[r];
  cluster::sum(wrong);
  return static_cast<double>(wrong[0]) / test.rows;
}

// Root's starting prototypes and standardisation on every rank: every worker must start
// from the same model (each rank computes it alike; this makes sure).
void share_model(Model& model) {
  if (cluster::size() == 1) return;
  model.prototypes = cluster::broadcast_values(std::move(model.prototypes));
  model.mean = cluster::broadcast_values(std::move(model.mean));
  model.scale = cluster::broadcast_values(std::move(model.scale));
}

}  // namespace

Model train(const Dataset& raw, const Dataset* test, const TrainOptions& options, const EpochCallback& on_epoch,
            Progress* progress) {
  if (options.batch == 0) throw UsageError("--batch must be at least 1");
  if (!(options.learning_rate > 0) || !std::isfinite(options.learning_rate))
    throw UsageError("--learning-rate must be a positive number");
  if (!(options.xi > 0) || !std::isfinite(options.xi)) throw UsageError("--xi must be a positive number");
  if (test != nullptr && (test->dims != raw.dims || !test->labelled() || test->classes != raw.classes))
    throw UsageError("the test set needs labels over the training set's classes and its number of features");
  Model model = initial_model(raw, options);
  share_model(model);
  Dataset scaled, scaled_test;  // standardised once, here
  const Dataset* data = &raw;
  if (!model.mean.empty()) {
    scaled = raw;
    detail::standardise(model, scaled);
    data = &scaled;
    if (test != nullptr) {
      scaled_test = *test;
      detail::standardise(model, scaled_test);
      test = &scaled_test;
    }
  }
  const double step = options.learning_rate * data_scale(*data);
  // The CPU and the GPU trainers exchange their outcomes differently: every rank must
  // train on the same kind of device.
  const bool gpu = options.device >= 0;
  if (cluster::size() > 1 && cluster::min(gpu) != cluster::max(gpu))
    throw UsageError("some ranks would train on GPUs and others on the CPU: give every rank the same --device "
                     "(cpu, or cuda where every host has a GPU)");
  const std::unique_ptr<detail::Trainer> trainer =
      gpu ? detail::gpu_trainer(*data, model, options) : detail::cpu_trainer(*data, model, options);

  const std::size_t n = data->rows;
  const std::size_t batches = (n + options.batch - 1) / options.batch;
  const double total_batches = static_cast<double>(batches * options.epochs);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(options.seed);
  std::vector<float> etas(batches), losses(n);
  std::vector<std::uint8_t> errors(n);
  Model best;
  double best_error = std::numeric_limits<double>::infinity();
  std::size_t since_best = 0;
  for (std::size_t epoch = 0; epoch < options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t b = 0; b < batches; ++b) {
      const double done = static_cast<double>(epoch * batches + b) / total_batches;
      etas[b] = static_cast<float>(options.schedule == Schedule::linear ? step * (1 - done) : step);
    }
    trainer->epoch(order, options.batch, etas, losses.data(), errors.data());
    EpochStats stats;
    stats.epoch = epoch + 1;
    for (std::size_t i = 0; i < n; ++i) {  // in order: the same sums on both paths
      stats.loss += losses[i];
      stats.train_error += errors[i];
    }
    stats.loss /= n;
    stats.train_error /= n;
    stats.learning_rate = etas[0];
    trainer->read_prototypes(model.prototypes.data());
    stats.test_error = test != nullptr ? test_error(model, *test, detail::gpus(options)) : std::nan("");
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (on_epoch) on_epoch(stats);
    if (progress != nullptr) progress->advance(n);
    if (options.patience > 0 && test != nullptr) {
      if (stats.test_error < best_error) {
        best_error = stats.test_error;
        best = model;
        since_best = 0;
      } else if (++since_best >= options.patience) {
        return best;
      }
    }
  }
  return options.patience > 0 && test != nullptr && best.count() > 0 ? best : model;
}

}  // namespace simkit::lvq
