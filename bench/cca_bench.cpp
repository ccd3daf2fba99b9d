// simkit_bench_cca: sliding-window CCA throughput at the seed's shape and accuracy on
// real data.
//  throughput   the seed's linear stream DS_L (X, Y linear in 4 shared factors plus
//               N(10, 10) noise), p = 256, q = 512, n = 2048: tuples per second after the
//               window is full, reporting every m tuples (--every list), with the skip
//               threshold (--skip list, every 1) and in approx mode (--epsilon list, every 1);
//               also the window upkeep alone (no report). Exact reports are timed with
//               report steps solved together (--batches list: 0 the backend's choice, 1
//               one at a time). Wall clock around Tracker::push (which returns with the
//               answers on the host), median of 3 segments.
//  --fashion DIR  Fashion-MNIST (idx files) as two streams, the left and right half of
//               each image (p = q = 392, pixels / 255): the top-5 correlations of the first
//               2048 training images (ridge 1e-4), and the seed's accuracy experiment: the
//               102 highest-variance pixels of each half, n = 204 .. 3264, epsilon 0.14
//               and alpha 1.1 (and looser samples): accuracy = mean rho_approx / rho_exact.
// JSON to --json.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "simkit/cca.hpp"
#include "simkit/device.hpp"
#include "simkit/lvq.hpp"
#include "timing.hpp"

namespace {

using namespace simkit;
using bench::now_s;

std::vector<double> linear_stream(std::size_t count, std::size_t p, std::size_t q, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0), noise(10.0, std::sqrt(10.0));
  const std::size_t d = p + q, factors = 4;
  std::vector<double> load(d * factors);
  for (double& v : load) v = 2 * normal(rng);
  std::vector<double> out(count * d);
  for (std::size_t t = 0; t < count; ++t) {
    double z[4];
    for (double& v : z) v = normal(rng);
    for (std::size_t c = 0; c < d; ++c) {
      double v = noise(rng);
      for (std::size_t f = 0; f < factors; ++f) v += load[c * factors + f] * z[f];
      out[t * d + c] = v;
    }
  }
  return out;
}

struct Throughput {
  double tuples_per_s = 0, us_per_tuple = 0;
  std::uint64_t solves = 0, skipped = 0, tuples = 0;
  double mean_kept = 0;
};

// Fills the window, then times `segments` pushes of `per_segment` tuples each.
Throughput measure(const cca::Layout& layout, const cca::Options& options, const std::vector<double>& stream,
                   std::size_t per_segment, int segments = 3) {
  const std::size_t d = layout.total();
  cca::Tracker tracker(layout, options);
  double kept = 0;
  std::size_t reports = 0;
  const auto on_report = [&](const cca::Report& r) {
    kept += double(r.pairs[0].a_kept + r.pairs[0].b_kept);
    ++reports;
  };
  tracker.push(stream.data(), options.window, on_report);
  std::vector<double> seconds;
  std::size_t at = options.window;
  const cca::Stats before = tracker.stats();
  for (int s = 0; s < segments; ++s) {
    const double start = now_s();
    tracker.push(stream.data() + at * d, per_segment, on_report);
    seconds.push_back(now_s() - start);
    at += per_segment;
  }
  Throughput out;
  const double median = bench::median(seconds);
  out.tuples_per_s = per_segment / median;
  out.us_per_tuple = 1e6 * median / per_segment;
  out.solves = tracker.stats().solves - before.solves;
  out.skipped = tracker.stats().skipped - before.skipped;
  out.tuples = per_segment * segments;
  out.mean_kept = reports > 0 ? kept / reports : 0;
  return out;
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(std::stod(text.substr(at, end - at)));
    at = end + 1;
  }
  return out;
}

// Fashion-MNIST images as a stream of (left half, right half) tuples, train then test.
std::vector<double> fashion_halves(const std::string& dir, std::size_t& count) {
  std::vector<double> out;
  count = 0;
  for (const char* name : {"train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz"}) {
    lvq::ReadOptions r;
    r.label_column = lvq::LabelColumn::none;
    const lvq::Dataset data = lvq::read_dataset(dir + "/" + name, r);
    for (std::size_t i = 0; i < data.rows; ++i) {
      const float* px = data.features.data() + i * 784;
      for (int half = 0; half < 2; ++half)
        for (int row = 0; row < 28; ++row)
          for (int col = 0; col < 14; ++col) out.push_back(px[row * 28 + half * 14 + col] / 255.0);
    }
    count += data.rows;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"simkit_bench_cca"};
  std::string device = "auto", every_list = "1,16,256", batch_list = "0,1", skip_list = "0.001,0.01",
              epsilon_list = "0.5,0.9", fashion, json_path;
  std::size_t p = 256, q = 512, window = 2048, steps = 400;
  bool quick = false;
  app.add_option("--device", device);
  app.add_option("--p", p);
  app.add_option("--q", q);
  app.add_option("--window", window);
  app.add_option("--steps", steps, "tuples a timed segment (every 1)");
  app.add_option("--every", every_list);
  app.add_option("--batches", batch_list, "report steps solved together (0: the backend's choice)");
  app.add_option("--skip", skip_list);
  app.add_option("--epsilon", epsilon_list);
  app.add_option("--fashion", fashion, "Fashion-MNIST idx folder");
  app.add_flag("--quick", quick, "the Fashion-MNIST accuracy experiment at fewer windows");
  app.add_option("--json", json_path);
  CLI11_PARSE(app, argc, argv);
  const Device dev = resolve_device(parse_device(device));
  const int index = dev.cuda ? dev.index : -1;
  nlohmann::json results;
  results["device"] = dev.name;
  results["shape"] = {{"p", p}, {"q", q}, {"window", window}};

  // Segments of `steps` tuples (at least 25 reports for sparse reporting, 16 x steps for
  // the upkeep alone).
  const auto segment = [&](std::size_t every) { return std::max(steps, 25 * every); };
  std::size_t longest = steps * 16;
  for (double every : parse_list(every_list)) longest = std::max(longest, segment(static_cast<std::size_t>(every)));
  std::fprintf(stderr, "bench: generating %zu tuples of %zu + %zu\n", window + 3 * longest, p, q);
  const std::vector<double> stream = linear_stream(window + 3 * longest + 10, p, q, 5);
  const cca::Layout layout{{p, q}};
  cca::Options base;
  base.window = window;
  base.k = 5;
  base.device = index;
  nlohmann::json rows = nlohmann::json::array();
  const auto record = [&](const std::string& name, const Throughput& t, nlohmann::json extra) {
    std::fprintf(stderr, "bench: %-28s %10.0f tuples/s  %9.1f us/tuple  %llu solves, %llu skipped%s\n", name.c_str(),
                 t.tuples_per_s, t.us_per_tuple, static_cast<unsigned long long>(t.solves),
                 static_cast<unsigned long long>(t.skipped),
                 t.mean_kept > 0 && t.mean_kept < double(p + q) ? fmt::format(", {:.0f} attributes kept", t.mean_kept).c_str()
                                                                : "");
    extra["name"] = name;
    extra["tuples_per_s"] = t.tuples_per_s;
    extra["us_per_tuple"] = t.us_per_tuple;
    extra["solves"] = t.solves;
    extra["skipped"] = t.skipped;
    extra["tuples"] = t.tuples;
    if (t.mean_kept > 0) extra["mean_kept"] = t.mean_kept;
    rows.push_back(extra);
  };

  {  // window upkeep alone: reports so rare that none falls in the timed segments
    cca::Options o = base;
    o.every = 1u << 30;
    record("upkeep (no report)", measure(layout, o, stream, steps * 16), {{"every", 0}});
  }
  for (double every : parse_list(every_list)) {
    for (double batch : parse_list(batch_list)) {
      cca::Options o = base;
      o.every = static_cast<std::size_t>(every);
      o.batch = static_cast<std::size_t>(batch);
      const std::size_t per = segment(o.every);
      record(fmt::format("exact every {} batch {}", o.every, o.batch == 0 ? "auto" : std::to_string(o.batch)),
             measure(layout, o, stream, per), {{"every", o.every}, {"batch", o.batch}});
    }
  }
  for (double delta : parse_list(skip_list)) {
    cca::Options o = base;
    o.skip = delta;
    record(fmt::format("exact --skip {:g}", delta), measure(layout, o, stream, steps * 4 <= longest ? steps * 4 : longest),
           {{"every", 1}, {"skip", delta}});
  }
  for (double eps : parse_list(epsilon_list)) {
    cca::Options o = base;
    o.mode = cca::Mode::approx;
    o.epsilon = eps;
    o.alpha = 1.1;
    record(fmt::format("approx eps {:g}", eps), measure(layout, o, stream, steps), {{"every", 1}, {"epsilon", eps}});
  }
  results["throughput"] = rows;

  if (!fashion.empty()) {
    std::size_t count = 0;
    const std::vector<double> halves = fashion_halves(fashion, count);
    std::fprintf(stderr, "bench: Fashion-MNIST: %zu tuples of 392 + 392\n", count);
    {  // the first 2048 training images, as in ../shared/data/README.md
      cca::Options o;
      o.window = 2048;
      o.k = 5;
      o.ridge = 1e-4;
      o.every = 2048;
      o.device = index;
      cca::Tracker tracker({{392, 392}}, o);
      std::vector<double> first;
      tracker.push(halves.data(), 4096, [&](const cca::Report& r) {
        std::fprintf(stderr, "bench: fashion halves t %llu: top-5 %s\n", static_cast<unsigned long long>(r.t),
                     fmt::format("{:.3f}", fmt::join(r.pairs[0].rho, " ")).c_str());
        results["fashion_top5"].push_back({{"t", r.t}, {"rho", r.pairs[0].rho}});
      });
      cca::Options every = o;
      every.every = 1;
      const Throughput t = measure({{392, 392}}, every, halves, steps);
      record("fashion 392+392 every 1", t, {{"every", 1}, {"data", "fashion-mnist halves"}});
      results["fashion_throughput"] = rows.back();
      every.batch = 1;
      record("fashion 392+392 every 1 batch 1", measure({{392, 392}}, every, halves, steps),
             {{"every", 1}, {"batch", 1}, {"data", "fashion-mnist halves"}});
    }
    // The seed's accuracy experiment at p = q = 102: each half's highest-variance pixels.
    std::vector<double> var(784, 0.0), mean(784, 0.0);
    const std::size_t sample = 10000;
    for (std::size_t t = 0; t < sample; ++t)
      for (std::size_t c = 0; c < 784; ++c) mean[c] += halves[t * 784 + c] / sample;
    for (std::size_t t = 0; t < sample; ++t)
      for (std::size_t c = 0; c < 784; ++c) var[c] += std::pow(halves[t * 784 + c] - mean[c], 2) / sample;
    std::vector<std::size_t> columns;
    for (int half = 0; half < 2; ++half) {
      std::vector<std::size_t> order(392);
      std::iota(order.begin(), order.end(), std::size_t(half * 392));
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return var[a] > var[b]; });
      order.resize(102);
      std::sort(order.begin(), order.end());
      columns.insert(columns.end(), order.begin(), order.end());
    }
    std::vector<double> narrow(count * 204);
    for (std::size_t t = 0; t < count; ++t)
      for (std::size_t c = 0; c < 204; ++c) narrow[t * 204 + c] = halves[t * 784 + columns[c]];
    nlohmann::json accuracy = nlohmann::json::array();
    for (const std::size_t n : {204, 408, 816, 1632, 3264}) {
      for (const auto& [eps, alpha] : {std::pair{0.14, 1.1}, {0.5, 1.1}, {0.9, 1.1}, {0.9, 0.3}}) {
        cca::Options o;
        o.window = n;
        o.k = 5;
        o.ridge = 1e-4;
        o.every = n / 2;
        o.mode = cca::Mode::approx;
        o.epsilon = eps;
        o.alpha = alpha;
        o.compare_exact = true;
        o.device = index;
        cca::Tracker tracker({{102, 102}}, o);
        double ratio = 0, kept = 0;
        std::size_t terms = 0, reports = 0;
        const std::size_t limit = std::min(count, (quick ? 10 : 40) * (n / 2) + n);
        tracker.push(narrow.data(), limit, [&](const cca::Report& r) {
          const cca::PairResult& pair = r.pairs[0];
          kept += pair.a_kept + pair.b_kept;
          ++reports;
          for (std::size_t j = 0; j < pair.rho.size(); ++j) {
            ratio += pair.rho[j] / pair.exact_rho[j];
            ++terms;
          }
        });
        const double acc = ratio / terms;
        std::fprintf(stderr, "bench: accuracy n %4zu eps %.2f alpha %.1f: %.4f (%zu windows, %.0f of 204 attributes kept)\n",
                     n, eps, alpha, acc, reports, kept / reports);
        accuracy.push_back({{"n", n}, {"epsilon", eps}, {"alpha", alpha}, {"accuracy", acc}, {"windows", reports}, {"mean_kept", kept / reports}});
      }
    }
    results["accuracy"] = accuracy;
  }
  if (!json_path.empty()) std::ofstream(json_path) << results.dump(2) << "\n";
  return 0;
}
