// simkit_bench_lvq: GLVQ training speed at the seed's scale and accuracy on real data.
//  --rows/--dims/--classes   synthetic data of the seed's shape (2,144,749 x 160, 3755
//                            classes: class centres plus uniform noise)
//  --prototypes LIST         prototypes a class (1,8)
//  --batches LIST            mini-batch sizes (1,16,256,2048,8192)
//  --sample-limit N          batch sizes whose epoch would take long run this many samples
//                            and are scaled to a whole epoch (said in the output)
//  --kernels LIST            GPU distance kernels to time (auto, or reduction,gemm)
//  --precisions LIST         GPU gemm kernel: fp32 and/or tf32 (tf32 timed for mb >= 256)
//  --compare-search          also the compare-exchange genuine/rival search (mb >= 256)
//  --train/--test FILE       a real data set: test error after --epochs on this device
//  --device cuda:all         every GPU of the machine, each training on a share of every
//                            batch (NCCL sums the outcomes); under mpirun (one GPU a rank
//                            with --device cuda) every rank's GPUs together
// Seconds per epoch are wall clock around Trainer::epoch, which ends synchronised (device
// work, the per-sample losses copied back); one warm-up batch run first. JSON to --json.
// Under mpirun every rank makes the same data and rank 0 reports.
#include <CLI/CLI.hpp>

#include <fstream>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/parallel_for.h>

#include "lvq/trainer.hpp"
#include "simkit/cluster.hpp"
#include "simkit/device.hpp"
#include "simkit/lvq.hpp"
#include "timing.hpp"

namespace {

using namespace simkit;
using bench::now_s;

lvq::Dataset synthetic(std::size_t rows, std::size_t dims, std::size_t classes, std::vector<float>& centres) {
  lvq::Dataset d;
  d.rows = rows;
  d.dims = dims;
  for (std::size_t c = 0; c < classes; ++c) d.classes.push_back(std::to_string(c));
  centres.resize(classes * dims);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : centres) v = u(rng);
  d.features.resize(rows * dims);
  d.labels.resize(rows);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 4096), [&](const auto& range) {
    std::mt19937_64 r(range.begin() + 1);
    std::uniform_real_distribution<float> noise(-0.8f, 0.8f);
    for (std::size_t i = range.begin(); i < range.end(); ++i) {
      const std::size_t c = i % classes;
      d.labels[i] = static_cast<std::uint32_t>(c);
      for (std::size_t t = 0; t < dims; ++t) d.features[i * dims + t] = centres[c * dims + t] + noise(r);
    }
  });
  return d;
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  cluster::start(argc, argv);
  const int status = run(argc, argv);
  cluster::stop();
  return status;
}

namespace {

int run(int argc, char** argv) {
  CLI::App app{"simkit_bench_lvq"};
  std::string precisions = "fp32,tf32";
  std::string device = "cuda", kernels = "auto", json_path, train_path, test_path;
  std::vector<std::size_t> protos{1, 8}, batches{1, 16, 256, 2048, 8192};
  std::size_t rows = 2144749, dims = 160, classes = 3755, sample_limit = 300000, epochs = 10, real_batch = 256,
              real_protos = 4;
  app.add_option("--device", device);
  app.add_option("--rows", rows);
  app.add_option("--dims", dims);
  app.add_option("--classes", classes);
  app.add_option("--prototypes", protos)->delimiter(',');
  app.add_option("--batches", batches)->delimiter(',');
  app.add_option("--kernels", kernels);
  app.add_option("--precisions", precisions);
  bool compare = false;
  app.add_flag("--compare-search", compare, "also time the compare-exchange search (mb >= 256)");
  app.add_option("--sample-limit", sample_limit);
  app.add_option("--train", train_path);
  app.add_option("--test", test_path);
  app.add_option("--epochs", epochs);
  app.add_option("--real-batch", real_batch);
  app.add_option("--real-prototypes", real_protos);
  app.add_option("--json", json_path);
  CLI11_PARSE(app, argc, argv);
  const Device dev = resolve_device(parse_device(device));
  const int index = dev.cuda ? dev.index : -1;
  const bool root = cluster::root();
  // The workers of the run: every rank's GPUs (or CPU).
  const std::size_t workers = cluster::parts(dev.cuda ? dev.indices.size() : 1).total;
  nlohmann::json out{{"device", dev.name}, {"rows", rows},          {"dims", dims},
                     {"classes", classes}, {"ranks", cluster::size()}, {"workers", workers}};
  if (root && workers > 1)
    fmt::print(stderr, "bench: {} workers: {} rank(s), {} GPU(s) a rank\n", workers, cluster::size(),
               dev.cuda ? dev.indices.size() : 0);

  if (rows > 0) {
    std::vector<float> centres;
    double start = now_s();
    const lvq::Dataset data = synthetic(rows, dims, classes, centres);
    if (root) fmt::print(stderr, "bench: synthetic {} x {}, {} classes made in {:.1f} s\n", rows, dims, classes, now_s() - start);
    std::vector<std::uint32_t> order(rows);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
    for (const std::size_t per_class : protos) {
      lvq::Model model;
      model.dims = dims;
      model.per_class = per_class;
      model.classes = data.classes;
      model.prototypes.resize(model.count() * dims);
      std::mt19937_64 rng(3);
      std::uniform_real_distribution<float> jitter(-0.1f, 0.1f);
      for (std::size_t j = 0; j < model.count(); ++j)
        for (std::size_t t = 0; t < dims; ++t) model.prototypes[j * dims + t] = centres[(j / per_class) * dims + t] + jitter(rng);
      std::vector<std::string> runs{"cpu"};
      if (dev.cuda) runs = kernels == "auto" ? std::vector<std::string>{"auto"} : std::vector<std::string>{"reduction", "gemm"};
      if (dev.cuda && precisions.find("tf32") != std::string::npos) runs.push_back("gemm-tf32");
      if (dev.cuda && compare) runs.push_back("gemm-compare");
      for (const std::size_t batch : batches)
        for (const std::string& kernel : runs) {
          if ((kernel == "gemm-tf32" || kernel == "gemm-compare") && batch < 256) continue;
          lvq::TrainOptions options;
          if (kernel == "gemm-compare") options.search = lvq::Search::compare;
          if (kernel == "gemm-tf32") options.precision = lvq::Precision::tf32;
          options.per_class = per_class;
          options.batch = batch;
          options.device = index;
          if (dev.cuda) options.devices = dev.indices;
          options.kernel = kernel == "reduction" ? lvq::Kernel::reduction
                           : kernel.starts_with("gemm") ? lvq::Kernel::gemm
                                                        : lvq::Kernel::automatic;
          if (kernel == "reduction" && batch > 16) continue;
          auto trainer = index >= 0 ? lvq::detail::gpu_trainer(data, model, options) : lvq::detail::cpu_trainer(data, model, options);
          // Small batches (and the CPU) run a part of the epoch, scaled to the whole.
          const bool partial = index < 0 ? rows > sample_limit / 10 : (batch < 256 && rows > sample_limit);
          const std::size_t n = partial ? std::min(rows, index < 0 ? sample_limit / 10 : sample_limit) / batch * batch : rows;
          std::vector<float> losses(rows);
          std::vector<std::uint8_t> errors(rows);
          const std::vector<float> etas((rows + batch - 1) / batch, 1e-3f);
          trainer->epoch(std::span(order).first(batch), batch, etas, losses.data(), errors.data());  // warm-up
          std::vector<double> times;
          for (int rep = 0; rep < (partial || index < 0 ? 1 : 3); ++rep) {
            cluster::barrier();  // the ranks start together
            start = now_s();
            trainer->epoch(std::span(order).first(n), batch, etas, losses.data(), errors.data());
            times.push_back((now_s() - start) * rows / n);
          }
          const double epoch_s = bench::median(times);
          double loss = 0;
          for (std::size_t i = 0; i < n; ++i) loss += losses[i];
          if (!root) continue;
          fmt::print(stderr, "bench: P {} mb {} kernel {}{}: {:.3f} s per epoch{} (mean loss {:.4f})\n", per_class, batch,
                     kernel, workers > 1 ? fmt::format(" on {} workers", workers) : "", epoch_s,
                     partial ? fmt::format(" (from {} samples)", n) : "", loss / n);
          out["epochs"].push_back({{"per_class", per_class}, {"batch", batch}, {"kernel", kernel}, {"seconds", epoch_s},
                                   {"samples_timed", n}, {"loss", loss / n}, {"workers", workers}});
          fmt::print("{}\t{}\t{}\t{}\t{:.4f}\n", per_class, batch, kernel, workers, epoch_s);
        }
    }
  }

  if (!train_path.empty()) {
    const lvq::Dataset train = lvq::read_dataset(train_path);
    lvq::ReadOptions r;
    r.classes = &train.classes;
    const lvq::Dataset test = lvq::read_dataset(test_path, r);
    lvq::TrainOptions options;
    options.per_class = real_protos;
    options.batch = real_batch;
    options.epochs = epochs;
    options.device = index;
    if (dev.cuda) options.devices = dev.indices;
    const double start = now_s();
    std::vector<lvq::EpochStats> curve;
    lvq::train(train, &test, options, [&](const lvq::EpochStats& e) { curve.push_back(e); });
    const double seconds = now_s() - start;
    if (root)
      fmt::print(stderr, "bench: real data {} x {} ({} classes), P {} mb {}, {} epochs on {}: test error {:.2f}%, loss {:.4f}, {:.2f} s\n",
               train.rows, train.dims, train.classes.size(), real_protos, real_batch, epochs, dev.name,
               100 * curve.back().test_error, curve.back().loss, seconds);
    nlohmann::json c;
    for (const auto& e : curve) c.push_back({{"epoch", e.epoch}, {"loss", e.loss}, {"train_error", e.train_error}, {"test_error", e.test_error}, {"seconds", e.seconds}});
    out["real"] = {{"train", train_path}, {"per_class", real_protos}, {"batch", real_batch}, {"seconds", seconds}, {"curve", c}};
  }
  if (!json_path.empty() && root) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}

}  // namespace
