// GLVQ prototype learning (seed 003): labelled prototypes, the nearest one (squared
// Euclidean distance) decides a sample's class, and training moves the nearest prototype
// of the true class (d_c) towards a sample and the nearest of any other class (d_r) away
// (Sato & Yamada's GLVQ: mu = (d_c - d_r) / (d_c + d_r), loss = sigmoid(xi mu)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace simkit {
class Progress;
}

namespace simkit::lvq {

// Samples, row-major. Class names are kept sorted (by value when every name is an
// integer, else by bytes); labels index them. An unlabelled set has no labels.
struct Dataset {
  std::size_t rows = 0;
  std::size_t dims = 0;
  std::vector<float> features;          // rows x dims
  std::vector<std::string> classes;
  std::vector<std::uint32_t> labels;    // rows entries, or empty
  bool labelled() const noexcept { return labels.size() == rows && rows > 0; }
};

enum class LabelColumn { first, last, none };
struct ReadOptions {
  std::string labels_path;              // labels of an .npy or idx file (a label a line, or an idx1 file)
  LabelColumn label_column = LabelColumn::first;  // CSV/TSV
  std::size_t dims = 0;                 // when known (a model's): CSV/TSV rows of `dims` fields carry no label
  const std::vector<std::string>* classes = nullptr;  // map labels onto these (a model's); unknown = error
};

// Reads a data set, the format chosen by the name (and the content):
//   .npy             float32, float64 or uint8 matrix (rows x dims, C order); labels from
//                    options.labels_path
//   idx (MNIST)      an idx3 (or any idxN, N >= 2) ubyte image file, .gz or not; labels
//                    from options.labels_path, or the file beside it named with
//                    "labels-idx1" for "images-idx3"
//   .skl             simkit's binary data set (write_dataset)
//   anything else    CSV or TSV text (.gz/.bz2/.zst too): a row a line, the label in the
//                    first (or last) field; the separator (comma or tab) is the first line's
// Throws InputError naming the file and line or byte for every malformed input: ragged
// rows, fields that are not finite numbers, missing labels, sizes that disagree.
Dataset read_dataset(const std::string& path, const ReadOptions& options = {});
// .skl: magic, version, sizes, class names, labels, float32 features, XXH3 checksum.
void write_dataset(const Dataset& data, const std::string& path);
Dataset parse_skl(std::string_view bytes, const std::string& name);

// Moves a random `fraction` of the rows (at least one, never all; chosen by `seed`) out
// of `data` into the returned set (a validation split), keeping their order.
Dataset hold_out(Dataset& data, double fraction, std::uint64_t seed);

// The distinct class names of `names`, sorted as Dataset::classes is.
std::vector<std::string> sorted_classes(std::vector<std::string> names);

// A trained model. Prototype j belongs to class j / per_class.
struct Model {
  std::size_t dims = 0;
  std::size_t per_class = 1;
  std::vector<std::string> classes;
  std::vector<float> prototypes;        // (classes x per_class) x dims
  std::vector<float> mean, scale;       // standardisation, x' = (x - mean) / scale (empty = none)
  std::size_t count() const noexcept { return classes.size() * per_class; }
};

enum class Init { automatic, means, kmeans };
enum class Schedule { linear, constant };
enum class Kernel { automatic, reduction, gemm };
enum class Search { reduction, compare };
enum class Precision { fp32, tf32 };

struct TrainOptions {
  std::size_t per_class = 1;
  Init init = Init::automatic;          // class means for 1 prototype a class, else k-means
  std::size_t epochs = 30;
  std::size_t batch = 32;               // mb; 1 = plain SGD
  double learning_rate = 0.01;          // relative to the data's scale (see below)
  Schedule schedule = Schedule::linear; // linear: decays to 0 over all batches
  double xi = 4;                        // the sigmoid's slope
  std::uint64_t seed = 1;               // k-means starts and the shuffling
  bool standardize = false;             // z-scores of each feature (statistics of the training set)
  std::size_t patience = 0;             // stop after this many epochs without a better test error (0: never)
  int device = -1;                      // CUDA device; -1 = the CPU
  std::vector<int> devices;             // several CUDA devices of this process (cuda:all), each training on a
                                        // share of every batch; empty: `device` alone
  Kernel kernel = Kernel::automatic;    // GPU distance kernel (auto: reduction for SGD on few prototypes)
  Search search = Search::reduction;    // GPU genuine/rival search: a block a sample, or a thread
  Precision precision = Precision::fp32;  // GPU: tf32 tensor cores for the gemm kernel
  std::size_t memory_budget = 0;        // GPU bytes; 0 = most of the free memory
};

// What one epoch did. The loss and the training error are those seen while training
// (each sample against the prototypes at the start of its batch); the test error is of
// the prototypes after the epoch (NaN without a test set).
struct EpochStats {
  std::size_t epoch = 0;
  double loss = 0;                      // mean sigmoid(xi mu)
  double train_error = 0;               // fraction with a rival prototype nearer than the genuine one
  double test_error = 0;
  double learning_rate = 0;             // the first batch's effective step
  double seconds = 0;
};

// The effective step of a batch is learning_rate x scale x schedule, `scale` the mean
// squared distance of the training samples to their class means, so one learning rate
// suits data of any magnitude. Within a batch, distances and coefficients come from the
// prototypes at its start; then each prototype takes its samples' updates one by one in
// batch order (m += a (x - m), one fused multiply-add per element): the same on the CPU
// and the GPU, and plain SGD when mb = 1.
//
// Under mpirun (include/simkit/cluster.hpp) train() is a collective: every rank calls it
// with the same data, options and seed, and the workers of the run (every rank's GPUs,
// or each rank's CPU) train data-parallel, each scoring a share of every batch (see
// src/lvq/trainer.hpp). Every rank returns the same model and sees the same figures,
// equal to one process's within float rounding.
using EpochCallback = std::function<void(const EpochStats&)>;
Model train(const Dataset& train, const Dataset* test, const TrainOptions& options,
            const EpochCallback& on_epoch = {}, Progress* progress = nullptr);

// The starting prototypes (class means, or k-means within each class), standardisation
// applied when asked. Throws InputError for fewer than 2 classes or a class with fewer
// samples than per_class.
Model initial_model(const Dataset& train, const TrainOptions& options);

// The `top` nearest classes of each row (rows x top, nearest first; each class once, by
// its nearest prototype; ties by lower class index) on `device` (-1 = the CPU; a GPU
// takes models of up to 9,830 classes, the CPU the rest).
std::vector<std::uint32_t> predict(const Model& model, const Dataset& data, std::size_t top = 1, int device = -1);
// predict() over every worker of the run: the GPUs `devices` of this process (none: the
// CPU) and, under mpirun, every rank's, each classifying a share of the rows. A
// collective: every rank calls it. Rank 0 gets every row's classes in order, as predict()
// gives them; the other ranks an empty vector.
std::vector<std::uint32_t> predict_distributed(const Model& model, const Dataset& data, std::size_t top,
                                               const std::vector<int>& devices);

// The fraction of rows whose first candidate is their label, and the confusion counts
// (classes x classes, row = true class).
struct Scores {
  double accuracy = 0;
  std::vector<std::uint64_t> confusion;
};
Scores score(const Model& model, const Dataset& data, const std::vector<std::uint32_t>& predictions, std::size_t top);

// .skq: magic, version, sizes, class names, standardisation, prototypes, XXH3 checksum.
void write_model(const Model& model, const std::string& path);
Model read_model(const std::string& path);
Model parse_model(std::string_view bytes, const std::string& name);

}  // namespace simkit::lvq
