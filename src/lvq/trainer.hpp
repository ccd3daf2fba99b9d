// Internal: what the CPU and the GPU trainers share. The epoch loop (train.cpp) hands a
// trainer the epoch's sample order and each batch's step; the trainer runs the seed's
// three steps per batch (distances, genuine/rival search with the loss, update) and
// reports each sample's loss and error, which the loop sums in order (the same sums on
// both paths).
//
// Several workers (the GPUs of this process and, under mpirun, every rank's GPUs or CPUs)
// train data-parallel: each scores its share of every batch (share_rows over the batch's
// samples) against the prototypes at the batch's start, the workers' outcomes (each
// sample's genuine and rival prototype, their two coefficients, its loss and error) are
// summed by an allreduce in which every slot has one contributor (so the sum is exact),
// and then every worker applies the whole batch's updates in batch order, as one process
// does. Every worker thus holds the same prototypes, equal to one process's except where
// a distance computed in a differently shaped product rounds a near-tie the other way.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "simkit/lvq.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::lvq::detail {

class Trainer {
 public:
  virtual ~Trainer() = default;
  // Trains on the samples order[0..n) in batches of `batch`, batch b with step etas[b];
  // losses[i] and errors[i] receive sample order[i]'s outcome.
  virtual void epoch(std::span<const std::uint32_t> order, std::size_t batch, std::span<const float> etas,
                     float* losses, std::uint8_t* errors) = 0;
  // The current prototypes (count x dims).
  virtual void read_prototypes(float* out) = 0;
};

// `data` (already standardised) and `model` (the starting prototypes) outlive the trainer.
// Each is a collective under mpirun (every rank builds its trainer): the CPU trainer is
// one worker a rank, the GPU trainer one a GPU of gpus(options).
std::unique_ptr<Trainer> cpu_trainer(const Dataset& data, const Model& model, const TrainOptions& options);
std::unique_ptr<Trainer> gpu_trainer(const Dataset& data, const Model& model, const TrainOptions& options);

// The GPUs this process trains and predicts on: options.devices, else options.device
// (none on the CPU).
std::vector<int> gpus(const TrainOptions& options);

// The `top` nearest classes of rows `rows` of `data` (standardised already) on CUDA device
// `device`, ranked as predict() ranks them; gpu_predicts() says whether the model's class
// count fits the kernel (the CPU answers otherwise).
bool gpu_predicts(const Model& model);
std::vector<std::uint32_t> predict_gpu(const Model& model, const Dataset& data, RowRange rows, std::size_t top,
                                       int device);

// x' = (x - mean) / scale for every row, when the model is standardised.
void standardise(const Model& model, Dataset& data);

// predict() on rows `rows` of data standardised already (training's test passes
// standardise once); rows.size() x top classes.
std::vector<std::uint32_t> nearest_classes(const Model& model, const Dataset& data, RowRange rows, std::size_t top,
                                           int device);

// This process's share of a prediction over the workers of the run (a share a GPU of
// `gpus`, or the CPU when empty; numbered across the ranks): the rows it covered
// (consecutive) and their classes, rows.size() x top.
struct RowsClassified {
  RowRange rows;
  std::vector<std::uint32_t> classes;
};
RowsClassified nearest_classes_here(const Model& model, const Dataset& data, std::size_t top,
                                    const std::vector<int>& gpus);

// Squared Euclidean distances of rows [first, first + n) of `x` (dims wide) to every
// prototype (norms given), row-major n x count, through BLAS; negative rounding clamped to 0.
void distances_cpu(const float* x, std::size_t n, const Model& model, const float* prototype_norms, float* out);

// One sample's GLVQ outcome from its genuine and rival distances, computed in double the
// same way on both paths: the loss sigmoid(xi mu), whether the rival wins (nearer, or as
// near with a lower index), and the update coefficients of the genuine prototype (towards
// the sample) and the rival (away from it).
struct Outcome {
  float loss = 0;
  std::uint8_t error = 0;
  float towards = 0, away = 0;
};
#ifdef __CUDACC__
__host__ __device__
#endif
inline Outcome glvq_outcome(float dc, float dr, bool rival_first, double xi, float eta) {
  Outcome o;
  const double sum = static_cast<double>(dc) + dr;
  const double mu = sum > 0 ? (static_cast<double>(dc) - dr) / sum : 0.0;
  const double f = 1.0 / (1.0 + exp(-xi * mu));
  o.loss = static_cast<float>(f);
  o.error = (dr < dc || (dr == dc && rival_first)) ? 1 : 0;
  if (sum > 0) {
    const double g = xi * f * (1 - f) * 4.0 / (sum * sum);
    o.towards = static_cast<float>(eta * g * dr);
    o.away = static_cast<float>(-eta * g * dc);
  }
  return o;
}

}  // namespace simkit::lvq::detail
