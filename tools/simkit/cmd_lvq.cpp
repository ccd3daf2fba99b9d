// simkit lvq: GLVQ prototype learning (train), classification (predict) and data set
// conversion to simkit's binary form (convert). Under mpirun every rank reads the data
// itself (refused when the ranks' files differ), train and predict share the work among
// every rank's GPUs (or CPUs), and rank 0 writes the outputs.
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "simkit/cluster.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/lvq.hpp"
#include "simkit/progress.hpp"

namespace simkit::cli {

namespace {

struct DataOptions {
  std::string path, labels, label_column = "first";
};

lvq::ReadOptions read_options(const DataOptions& d) {
  lvq::ReadOptions r;
  r.labels_path = d.labels;
  if (d.label_column == "first") r.label_column = lvq::LabelColumn::first;
  else if (d.label_column == "last") r.label_column = lvq::LabelColumn::last;
  else if (d.label_column == "none") r.label_column = lvq::LabelColumn::none;
  else throw UsageError(fmt::format("--label-column {}: expected first, last or none", quote(d.label_column)));
  return r;
}

struct TrainOptions {
  CommonOptions common;
  DataOptions train, test;
  std::string output, curve, init = "auto", schedule = "linear", kernel = "auto", search = "reduction", precision = "fp32";
  double validation = 0;
  lvq::TrainOptions lvq;
};

struct PredictOptions {
  CommonOptions common;
  DataOptions data;
  std::string model, output = "-", confusion, format = "tsv";
  std::size_t top = 1;
  bool no_predictions = false;
};

struct ConvertOptions {
  CommonOptions common;
  DataOptions data;
  std::string output;
};

template <typename Enum>
Enum choose(const std::string& flag, const std::string& value, std::initializer_list<std::pair<const char*, Enum>> choices) {
  std::string names;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    names += names.empty() ? name : std::string(", ") + name;
  }
  throw UsageError(fmt::format("{} {}: expected {}", flag, quote(value), names));
}

std::string percent(double fraction) { return std::isnan(fraction) ? "-" : fmt::format("{:.2f}%", 100 * fraction); }

// Every rank reads its own copy of the data: the copies must be the same file.
void check_same_data(const DataOptions& d) {
  cluster::check_same_file(d.path);
  if (!d.labels.empty()) cluster::check_same_file(d.labels);
}

// --device auto's rule (docs/gpu.md; bench/auto_device.sh on an H200 with 16 cores): the
// training's work grows with samples x features x prototypes x epochs; below
// kLvqGpuWork the CPU ends first, the GPU's start and its per-batch launches counted.
constexpr double kLvqGpuWork = 5e9;

int run_train(TrainOptions& options) {
  Context context = make_context(options.common, false);
  parse_device(options.common.device);  // a bad --device refused before the data are read
  lvq::TrainOptions& t = options.lvq;
  t.init = choose<lvq::Init>("--init", options.init,
                             {{"auto", lvq::Init::automatic}, {"means", lvq::Init::means}, {"kmeans", lvq::Init::kmeans}});
  t.schedule = choose<lvq::Schedule>("--schedule", options.schedule,
                                     {{"linear", lvq::Schedule::linear}, {"constant", lvq::Schedule::constant}});
  t.kernel = choose<lvq::Kernel>("--kernel", options.kernel,
                                 {{"auto", lvq::Kernel::automatic}, {"reduction", lvq::Kernel::reduction}, {"gemm", lvq::Kernel::gemm}});
  t.search = choose<lvq::Search>("--search", options.search,
                                 {{"reduction", lvq::Search::reduction}, {"compare", lvq::Search::compare}});
  t.precision = choose<lvq::Precision>("--precision", options.precision,
                                       {{"fp32", lvq::Precision::fp32}, {"tf32", lvq::Precision::tf32}});
  t.memory_budget = context.memory_budget;
  check_same_data(options.train);
  if (!options.test.path.empty()) check_same_data(options.test);
  const auto start = std::chrono::steady_clock::now();
  lvq::Dataset train = lvq::read_dataset(options.train.path, read_options(options.train));
  if (!train.labelled())
    throw InputError(Location{options.train.path}, "the training set has no labels (give --train-labels for .npy or idx data)");
  std::optional<lvq::Dataset> test;
  if (!options.test.path.empty()) {
    lvq::ReadOptions r = read_options(options.test);
    r.classes = &train.classes;
    test = lvq::read_dataset(options.test.path, r);
    if (!test->labelled()) throw InputError(Location{options.test.path}, "the test set has no labels");
    if (test->dims != train.dims)
      throw InputError(Location{options.test.path},
                       fmt::format("{} features a sample, the training set has {}", test->dims, train.dims));
  } else if (options.validation > 0) {
    test = lvq::hold_out(train, options.validation, t.seed);
  }
  if (context.timings) note(fmt::format("timing: read {} samples x {} features in {:.3f} s", train.rows, train.dims, seconds_since(start)));
  // Every rank reads the same data, so every rank decides alike.
  const double work = static_cast<double>(train.rows) * static_cast<double>(train.dims) *
                      static_cast<double>(train.classes.size() * t.per_class) * static_cast<double>(t.epochs);
  context.device = device_for_job(options.common, work >= kLvqGpuWork);
  t.device = context.device.cuda ? context.device.index : -1;
  if (context.device.cuda) t.devices = context.device.indices;

  std::unique_ptr<OutputFile> curve;
  if (!options.curve.empty()) {
    curve = std::make_unique<OutputFile>(options.curve, cluster::root());
    curve->write("epoch,loss,train_error,test_error,learning_rate,seconds\n");
  }
  const bool chatty = progress_enabled() || context.timings;
  lvq::Model model;
  {
    Progress progress("training", train.rows * t.epochs, "samples");
    try {
    model = lvq::train(train, test ? &*test : nullptr, t, [&](const lvq::EpochStats& e) {
      if (curve)
        curve->write(fmt::format("{},{:.8g},{:.8g},{},{:.8g},{:.4f}\n", e.epoch, e.loss, e.train_error,
                                 std::isnan(e.test_error) ? std::string() : fmt::format("{:.8g}", e.test_error),
                                 e.learning_rate, e.seconds));
      if (chatty)
        note(fmt::format("epoch {}/{}: loss {:.5f}, train error {}, test error {} ({:.3f} s)", e.epoch, t.epochs, e.loss,
                         percent(e.train_error), percent(e.test_error), e.seconds));
    }, &progress);
    } catch (const InputError& e) {  // about the training set as a whole: name it
      if (!e.where().file.empty()) throw;
      throw InputError(Location{options.train.path}, e.reason());
    }
  }
  if (cluster::root()) lvq::write_model(model, options.output);
  if (curve) curve->commit();
  if (context.timings)
    note(fmt::format("timing: {} prototypes trained on {} in {:.3f} s", model.count(), context.device.name, seconds_since(start)));
  return kExitOk;
}

int run_predict(const PredictOptions& options) {
  const Context context = make_context(options.common);
  if (options.format != "tsv" && options.format != "json")
    throw UsageError(fmt::format("--format {}: expected tsv or json", quote(options.format)));
  if (options.top == 0) throw UsageError("--top must be at least 1");
  cluster::check_same_file(options.model);
  check_same_data(options.data);
  const lvq::Model model = lvq::read_model(options.model);
  lvq::ReadOptions r = read_options(options.data);
  r.dims = model.dims;
  r.classes = &model.classes;
  const lvq::Dataset data = lvq::read_dataset(options.data.path, r);
  const std::size_t top = std::min(options.top, model.classes.size());
  if (!options.confusion.empty() && !data.labelled()) throw UsageError("--confusion needs labelled data");
  const auto start = std::chrono::steady_clock::now();
  // Each worker classifies a share of the rows; rank 0 gets them all, in order, and writes.
  const std::vector<std::uint32_t> predictions =
      lvq::predict_distributed(model, data, top, context.device.cuda ? context.device.indices : std::vector<int>{});
  if (context.timings) note(fmt::format("timing: {} samples classified in {:.3f} s", data.rows, seconds_since(start)));
  OutputFile out(options.output, cluster::root());
  if (!cluster::root()) {
    out.commit();
    return kExitOk;
  }
  fmt::memory_buffer text;
  const auto flush = [&](bool last) {
    if (text.size() > (1u << 20) || last) out.write({text.data(), text.size()}), text.clear();
  };
  if (!options.no_predictions)
    for (std::size_t row = 0; row < data.rows; ++row) {
      if (options.format == "json") {
        nlohmann::json classes = nlohmann::json::array();
        for (std::size_t k = 0; k < top; ++k) classes.push_back(model.classes[predictions[row * top + k]]);
        fmt::format_to(std::back_inserter(text), "{}\n", nlohmann::json{{"row", row + 1}, {"classes", classes}}.dump());
      } else {
        fmt::format_to(std::back_inserter(text), "{}", row + 1);
        for (std::size_t k = 0; k < top; ++k) fmt::format_to(std::back_inserter(text), "\t{}", model.classes[predictions[row * top + k]]);
        text.push_back('\n');
      }
      flush(false);
    }
  if (data.labelled()) {
    const lvq::Scores s = lvq::score(model, data, predictions, top);
    if (options.format == "json") fmt::format_to(std::back_inserter(text), "{{\"accuracy\": {:.4f}}}\n", s.accuracy);
    else fmt::format_to(std::back_inserter(text), "accuracy {:.4f}\n", s.accuracy);
    if (!options.confusion.empty()) {
      // A header of predicted classes, then a row a true class.
      fmt::memory_buffer table;
      fmt::format_to(std::back_inserter(table), "true\\predicted");
      for (const std::string& c : model.classes) fmt::format_to(std::back_inserter(table), "\t{}", c);
      table.push_back('\n');
      const std::size_t n = model.classes.size();
      for (std::size_t a = 0; a < n; ++a) {
        fmt::format_to(std::back_inserter(table), "{}", model.classes[a]);
        for (std::size_t b = 0; b < n; ++b) fmt::format_to(std::back_inserter(table), "\t{}", s.confusion[a * n + b]);
        table.push_back('\n');
      }
      write_file_atomically(options.confusion, {table.data(), table.size()});
    }
  }
  flush(true);
  out.commit();
  return kExitOk;
}

int run_convert(const ConvertOptions& options) {
  make_context(options.common);
  const lvq::Dataset data = lvq::read_dataset(options.data.path, read_options(options.data));
  if (cluster::root()) lvq::write_dataset(data, options.output);  // once under mpirun
  return kExitOk;
}

void add_data_options(CLI::App& sub, DataOptions& d, const std::string& prefix, const std::string& what) {
  sub.add_option("--" + prefix + "-labels", d.labels,
                 "labels of " + what + " when it is .npy or idx: a label a line, or an idx1 file "
                 "(idx: found beside the images when named *labels-idx1*)");
  sub.add_option("--" + prefix + "-label-column", d.label_column, "CSV/TSV: the label is the first or last field, or none")
      ->capture_default_str();
}

}  // namespace

Runner add_lvq_command(CLI::App& app) {
  auto train = std::make_shared<TrainOptions>();
  auto predict = std::make_shared<PredictOptions>();
  auto convert = std::make_shared<ConvertOptions>();
  CLI::App* command = app.add_subcommand("lvq", "GLVQ prototype learning: nearest-prototype classifiers, trained on the CPU or a GPU.");
  command->require_subcommand(1);
  command->footer(
      "Data: CSV or TSV rows 'label,f1,f2,...' (.gz/.bz2/.zst too; a header line is skipped), NumPy .npy\n"
      "with a labels file, MNIST idx files (labels found beside the images), or .skl from 'simkit lvq convert'.\n"
      "Examples:\n"
      "  simkit lvq train --train digits.csv --validation 0.3 --prototypes-per-class 2 -o digits.skq\n"
      "  simkit lvq train --train train-images-idx3-ubyte.gz --test t10k-images-idx3-ubyte.gz --batch 256 -o fashion.skq\n"
      "  simkit lvq predict --model digits.skq --data digits.csv --top 3\n"
      "  simkit lvq convert train-images-idx3-ubyte.gz -o train.skl");

  CLI::App* t = command->add_subcommand(
      "train",
      "Trains GLVQ prototypes (squared Euclidean distance; loss sigmoid(xi mu), mu = (d_c - d_r)/(d_c + d_r)) in\n"
      "mini-batches and writes the model (.skq). Prints each epoch's loss and errors on standard error.");
  t->add_option("--train", train->train.path, "the training data")->required();
  t->add_option("--test", train->test.path, "test data, classified after every epoch");
  add_data_options(*t, train->train, "train", "--train");
  add_data_options(*t, train->test, "test", "--test");
  t->add_option("--validation", train->validation, "without --test: hold out this fraction of the training data as the test set");
  t->add_option("-o,--output", train->output, "the model file to write")->required();
  t->add_option("-p,--prototypes-per-class", train->lvq.per_class, "prototypes a class")->capture_default_str();
  t->add_option("--init", train->init, "auto (means for 1 a class, else k-means), means or kmeans (within each class)")
      ->capture_default_str();
  t->add_option("-e,--epochs", train->lvq.epochs, "passes over the training data")->capture_default_str();
  t->add_option("-b,--batch", train->lvq.batch, "mini-batch size mb (1 = SGD); within a batch, distances come from its start")
      ->capture_default_str();
  t->add_option("--learning-rate", train->lvq.learning_rate,
                "step size, in units of the data's scale (mean squared distance to the class means)")
      ->capture_default_str();
  t->add_option("--schedule", train->schedule, "linear (decays to 0 over the training) or constant")->capture_default_str();
  t->add_option("--xi", train->lvq.xi, "the sigmoid's slope")->capture_default_str();
  t->add_option("--seed", train->lvq.seed, "k-means starts, shuffling and the validation split")->capture_default_str();
  t->add_flag("--standardize", train->lvq.standardize, "z-score each feature (training statistics, stored in the model)");
  t->add_option("--patience", train->lvq.patience,
                "stop after this many epochs without a better test error and keep the best model (0: never)")
      ->capture_default_str();
  t->add_option("--curve", train->curve, "write the learning curve (CSV: epoch,loss,train_error,test_error,...)");
  t->add_option("--kernel", train->kernel, "GPU distances: auto (reduction for SGD on few prototypes, else gemm), reduction or gemm (cuBLAS)")
      ->capture_default_str();
  t->add_option("--search", train->search,
                "GPU genuine/rival search: reduction (a block a sample) or compare (a thread a sample)")
      ->capture_default_str();
  t->add_option("--precision", train->precision, "GPU gemm kernel: fp32 (exact) or tf32 (tensor cores)")->capture_default_str();
  add_common_options(*t, train->common);

  CLI::App* p = command->add_subcommand(
      "predict",
      "Classifies samples by their nearest prototype: 'row<TAB>class' lines (with --top N, the N nearest\n"
      "classes), then, when the data has labels, 'accuracy 0.xxxx'.");
  p->add_option("-m,--model", predict->model, "the model (.skq, from 'simkit lvq train')")->required();
  p->add_option("--data", predict->data.path, "the samples (rows with or without a label)")->required();
  p->add_option("--labels", predict->data.labels, "labels of .npy or idx data");
  p->add_option("--label-column", predict->data.label_column, "CSV/TSV with labels: first or last field")->capture_default_str();
  p->add_option("--top", predict->top, "candidate classes per sample, nearest first")->capture_default_str();
  p->add_option("--confusion", predict->confusion, "write the confusion counts (TSV, a row a true class) to this file");
  p->add_flag("--no-predictions", predict->no_predictions, "print only the accuracy");
  p->add_option("--format", predict->format, "tsv or json (a JSON object a line)")->capture_default_str();
  p->add_option("-o,--output", predict->output, "output file (default: standard output)");
  add_common_options(*p, predict->common);

  CLI::App* c = command->add_subcommand("convert", "Writes a data set in simkit's binary form (.skl), which loads at once.");
  c->add_option("data", convert->data.path, "the data set")->required();
  c->add_option("--labels", convert->data.labels, "labels of .npy or idx data");
  c->add_option("--label-column", convert->data.label_column, "CSV/TSV: first, last or none")->capture_default_str();
  c->add_option("-o,--output", convert->output, "the .skl file to write")->required();
  add_common_options(*c, convert->common);

  return [t, p, train, predict, convert]() {
    if (t->parsed()) return run_train(*train);
    if (p->parsed()) return run_predict(*predict);
    return run_convert(*convert);
  };
}

}  // namespace simkit::cli
