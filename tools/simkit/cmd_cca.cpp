// simkit cca: canonical correlations of two streams (or of every pair of many streams)
// over a sliding window, a row per reported step, as the tuples arrive.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "simkit/cluster.hpp"
#include "simkit/cca.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/threads.hpp"

namespace simkit::cli {

namespace {

struct CcaOptions {
  CommonOptions common;
  std::string x_file, y_file, input, x_columns, y_columns, output = "-", format = "tsv", mode = "exact", convert;
  std::vector<std::string> streams;
  std::size_t batch = 4096;
  bool approx_error = false;
  double skip = -1;
  cca::Options cca;
};

// Picks the X and Y columns out of each row of a single input.
struct ColumnPick {
  std::vector<std::size_t> columns;  // X's then Y's
  void apply(std::vector<double>& rows, std::size_t width) const {
    const std::size_t count = rows.size() / width;
    std::vector<double> out(count * columns.size());
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t c = 0; c < columns.size(); ++c) out[r * columns.size() + c] = rows[r * width + columns[c]];
    rows.swap(out);
  }
};

std::string number(double v) { return fmt::format("{:.8f}", v); }

nlohmann::json json_array(const std::vector<double>& values, std::size_t first, std::size_t count) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < count; ++i) out.push_back(values[first + i]);
  return out;
}

nlohmann::json json_vectors(const std::vector<double>& vectors, std::size_t k, std::size_t dims) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t j = 0; j < k; ++j) out.push_back(json_array(vectors, j * dims, dims));
  return out;
}

void write_tsv(fmt::memory_buffer& text, const cca::Report& report, const cca::Layout& layout, bool streams) {
  for (const cca::PairResult& pair : report.pairs) {
    fmt::format_to(std::back_inserter(text), "{}", report.t);
    if (streams) fmt::format_to(std::back_inserter(text), "\t{}\t{}", pair.a + 1, pair.b + 1);
    for (double rho : pair.rho) fmt::format_to(std::back_inserter(text), "\t{}", number(rho));
    text.push_back('\n');
    // With --vectors: a line per canonical vector, 't<TAB>x|y<TAB>j<TAB>values'.
    const std::size_t k = pair.rho.size();
    for (int side = 0; side < 2 && !pair.a_vectors.empty(); ++side) {
      const std::vector<double>& v = side == 0 ? pair.a_vectors : pair.b_vectors;
      const std::size_t dims = layout.dims[side == 0 ? pair.a : pair.b];
      const std::string name = streams ? std::to_string((side == 0 ? pair.a : pair.b) + 1) : (side == 0 ? "x" : "y");
      for (std::size_t j = 0; j < k; ++j) {
        fmt::format_to(std::back_inserter(text), "{}\t{}\t{}", report.t, name, j + 1);
        for (std::size_t i = 0; i < dims; ++i) fmt::format_to(std::back_inserter(text), "\t{:.10g}", v[j * dims + i]);
        text.push_back('\n');
      }
    }
  }
}

void write_json(fmt::memory_buffer& text, const cca::Report& report, const cca::Layout& layout, bool streams,
                bool approx) {
  nlohmann::json line;
  line["t"] = report.t;
  if (!report.recomputed) line["recomputed"] = false;
  nlohmann::json pairs = nlohmann::json::array();
  for (const cca::PairResult& pair : report.pairs) {
    nlohmann::json p;
    if (streams) p["streams"] = {pair.a + 1, pair.b + 1};
    p["rho"] = pair.rho;
    if (approx) p["kept"] = {pair.a_kept, pair.b_kept};
    if (!pair.exact_rho.empty()) p["exact_rho"] = pair.exact_rho;
    if (!pair.a_vectors.empty()) {
      p[streams ? "a_vectors" : "x_vectors"] = json_vectors(pair.a_vectors, pair.rho.size(), layout.dims[pair.a]);
      p[streams ? "b_vectors" : "y_vectors"] = json_vectors(pair.b_vectors, pair.rho.size(), layout.dims[pair.b]);
    }
    pairs.push_back(std::move(p));
  }
  if (streams) {
    line["pairs"] = std::move(pairs);
  } else {
    for (auto& [key, value] : pairs[0].items()) line[key] = value;
  }
  fmt::format_to(std::back_inserter(text), "{}\n", line.dump());
}

// --device auto takes the GPU when the exact solves' work, (p + q)^3 a report summed over
// the stream pairs, reaches kCcaGpuWork: below it the CPU ends first, the GPU's start (0.4
// to 0.5 s) counted (bench/results/auto_device.md, cca). Tuples that arrive live, or whose
// count a file does not show, keep the GPU.
constexpr double kCcaGpuWork = 3e10;

// The tuples in `path` (`columns` values each), counted up to `enough`, for that rule: a
// .sks stream's from its size (4 bytes a value), text's by its lines; nothing for
// standard input or what is not a regular file.
std::optional<std::uint64_t> tuples_in(const std::string& path, std::size_t columns, std::uint64_t enough) {
  std::error_code error;
  if (path == "-" || !std::filesystem::is_regular_file(path, error) || columns == 0) return std::nullopt;
  const MappedFile file = MappedFile::open(path);
  if (file.size() > 0 && file.data()[0] == 'S') return file.size() / (4 * columns);
  std::uint64_t lines = 0;
  for (const char* at = file.data(); lines < enough;) {
    at = static_cast<const char*>(std::memchr(at, '\n', static_cast<std::size_t>(file.data() + file.size() - at)));
    if (at == nullptr) break;
    ++at;
    ++lines;
  }
  return lines + (file.size() > 0 && file.data()[file.size() - 1] != '\n' ? 1 : 0);
}

// Whether the solves' work reaches kCcaGpuWork: (d_a + d_b)^3 for each pair of streams
// tracked, times the reports of the tuples of `path` (counted only as far as the rule
// needs; true when they cannot be counted).
bool cca_gpu_pays_off(const cca::Layout& layout, const cca::Options& c, const std::string& path, std::size_t columns) {
  double per_report = 0;
  for (std::size_t a = 0; a < layout.dims.size(); ++a)
    for (std::size_t b = a + 1; b < layout.dims.size(); ++b)
      per_report += std::pow(static_cast<double>(layout.dims[a] + layout.dims[b]), 3);
  const std::size_t every = std::max<std::size_t>(c.every, 1);
  const double reports = std::ceil(kCcaGpuWork / std::max(per_report, 1.0));
  const double enough = static_cast<double>(c.window) + (reports - 1) * static_cast<double>(every);
  const std::optional<std::uint64_t> tuples =
      tuples_in(path, columns, enough >= 1e18 ? std::uint64_t{1} << 60 : static_cast<std::uint64_t>(enough));
  if (!tuples) return true;
  if (*tuples < c.window) return false;
  return per_report * static_cast<double>((*tuples - c.window) / every + 1) >= kCcaGpuWork;
}

int run_cca(CcaOptions& options) {
  Context context = make_context(options.common, false);  // the device: once the input's size is known
  const bool two_files = !options.x_file.empty() || !options.y_file.empty();
  const bool one_file = !options.input.empty();
  const bool many = !options.streams.empty();
  if (int(two_files) + int(one_file) + int(many) != 1)
    throw UsageError("give the tuples one way: --x-file and --y-file, --input with --x and --y, or --streams");
  if (two_files && (options.x_file.empty() || options.y_file.empty()))
    throw UsageError("--x-file and --y-file go together");
  if (one_file && (options.x_columns.empty() || options.y_columns.empty()))
    throw UsageError("--input needs --x and --y (column ranges such as --x 0-255 --y 256-767)");
  if (many && options.streams.size() < 2) throw UsageError("--streams needs at least two files");
  if (options.format != "tsv" && options.format != "json")
    throw UsageError(fmt::format("--format {}: expected tsv or json", quote(options.format)));
  if (options.mode != "exact" && options.mode != "approx")
    throw UsageError(fmt::format("--mode {}: expected exact or approx", quote(options.mode)));
  if (options.batch == 0) throw UsageError("--batch must be at least 1");

  // Under mpirun the pairs of many streams are shared out among the ranks (and the GPUs of
  // --device cuda:all): every worker tracks the same tuples, which rank 0 reads and hands
  // on, and solves its share of the pairs. One pair, and --convert, are rank 0's alone.
  const bool share = many && options.convert.empty();
  if (!share && !cluster::root()) return kExitOk;
  const bool shared_tuples = share && cluster::size() > 1;

  // The tuples, as one reader of concatenated streams (on rank 0).
  cca::Layout layout;
  std::unique_ptr<cca::TupleReader> reader;
  ColumnPick pick;
  std::string name = many ? options.streams.front() : one_file ? options.input : options.x_file;
  if (cluster::root()) {
    if (one_file) {
      reader = cca::open_reader(options.input);
      const std::vector<std::size_t> x = cca::parse_columns(options.x_columns), y = cca::parse_columns(options.y_columns);
      for (const auto* list : {&x, &y})
        for (std::size_t c : *list)
          if (c >= reader->columns())
            throw InputError(Location{options.input}, fmt::format("column {} was asked for, but a tuple has {} columns "
                                                                  "(0-based)",
                                                                  c, reader->columns()));
      pick.columns = x;
      pick.columns.insert(pick.columns.end(), y.begin(), y.end());
      layout.dims = {x.size(), y.size()};
    } else {
      std::vector<std::string> paths = many ? options.streams : std::vector<std::string>{options.x_file, options.y_file};
      std::vector<std::unique_ptr<cca::TupleReader>> readers;
      for (const std::string& path : paths) {
        readers.push_back(cca::open_reader(path));
        layout.dims.push_back(readers.back()->columns());
        if (layout.dims.back() == 0) throw InputError(Location{path}, "no tuples");
      }
      reader = cca::zip_readers(std::move(readers), paths);
    }
    if (layout.dims[0] == 0) throw InputError(Location{name}, "no tuples");
  }
  bool live = cluster::root() && reader->live();
  // Whether the GPU pays off under --device auto (rank 0 counts the tuples).
  bool gpu_pays_off = true;
  if (cluster::root() && parse_device(options.common.device).kind == DeviceSpec::Kind::Auto && !live)
    gpu_pays_off = cca_gpu_pays_off(layout, options.cca, name, one_file ? reader->columns() : layout.dims.front());
  if (shared_tuples) {  // the streams' widths, whether they arrive live and the device rule, from rank 0
    std::vector<std::size_t> head = {live ? 1u : 0u, gpu_pays_off ? 1u : 0u};
    head.insert(head.end(), layout.dims.begin(), layout.dims.end());
    head = cluster::broadcast_values(std::move(head));
    live = head[0] != 0;
    gpu_pays_off = head[1] != 0;
    layout.dims.assign(head.begin() + 2, head.end());
  }
  if (options.convert.empty()) context.device = device_for_job(options.common, gpu_pays_off);
  const std::size_t width = cluster::root() ? reader->columns() : layout.total();

  OutputFile out(options.convert.empty() ? options.output : options.convert, cluster::root());
  const std::size_t per_read = live ? 1 : options.batch;
  // The next tuples (every rank the same): 0 at the end.
  std::vector<double> rows;
  const auto next_rows = [&]() -> std::size_t {
    if (cluster::root()) reader->next(rows, per_read);
    if (shared_tuples) rows = cluster::broadcast_values(std::move(rows));
    if (!pick.columns.empty()) pick.apply(rows, width);
    return rows.size() / layout.total();
  };
  const auto start = std::chrono::steady_clock::now();

  if (!options.convert.empty()) {
    cca::BinaryWriter writer(out.stream(), layout.total());
    while (const std::size_t count = next_rows()) writer.add(rows.data(), count);
    writer.finish();
    out.commit();
    return kExitOk;
  }

  cca::Options& c = options.cca;
  c.mode = options.mode == "approx" ? cca::Mode::approx : cca::Mode::exact;
  c.compare_exact = options.approx_error;
  c.skip = options.skip;
  if (options.approx_error && c.mode != cca::Mode::approx) throw UsageError("--approx-error goes with --mode approx");
  // A tracker a worker: one a GPU this process drives (many streams), else one; numbered
  // across the ranks, each solving its share of the pairs.
  std::vector<int> gpus;
  if (context.device.cuda)
    gpus = share && !context.device.indices.empty() ? context.device.indices : std::vector<int>{context.device.index};
  const std::size_t local = std::max<std::size_t>(gpus.size(), 1);
  const cluster::Parts run = share ? cluster::parts(local) : cluster::Parts{};
  std::vector<std::unique_ptr<cca::Tracker>> trackers;
  for (std::size_t w = 0; w < local; ++w) {
    cca::Options mine = c;
    mine.device = gpus.empty() ? -1 : gpus[w];
    if (run.total > 1) mine.pairs = cca::share_pairs(layout, run.first + w, run.total);
    trackers.push_back(std::make_unique<cca::Tracker>(layout, mine));
  }
  const bool json = options.format == "json";
  fmt::memory_buffer text;
  while (const std::size_t count = next_rows()) {
    std::vector<cca::Reports> found(local);
    try {
      run_parts(local, [&](std::size_t w) {
        try {
          trackers[w]->push(rows.data(), count, [&](const cca::Report& report) { found[w].reports.push_back(report); });
        } catch (const cca::SingularWindow& e) {  // the steps before it still count
          found[w].singular = e;
        }
      });
    } catch (const InputError& e) {  // about the data as a whole: name it
      if (!e.where().file.empty()) throw;
      throw InputError(Location{name}, e.reason());
    }
    // The workers' reports put together (on rank 0), in the order one tracker gives them.
    cca::Reports all = cca::merge_reports(std::move(found));
    if (share) all = cca::gather_reports(std::move(all));  // (one pair: rank 0 alone, no collective)
    for (const cca::Report& report : all.reports) {
      if (json) write_json(text, report, layout, many, c.mode == cca::Mode::approx);
      else write_tsv(text, report, layout, many);
    }
    if (all.singular) throw InputError(Location{name}, all.singular->reason());
    if (text.size() > (1u << 20) || live) {
      out.write({text.data(), text.size()});
      text.clear();
      if (live) std::fflush(out.stream());
    }
  }
  out.write({text.data(), text.size()});
  out.commit();
  const cca::Stats& s = trackers.front()->stats();  // the schedule's, the same for every share
  if (s.tuples < c.window)
    note(fmt::format("only {} tuples, fewer than the window of {}: nothing to report", s.tuples, c.window));
  if (c.skip >= 0 || context.timings)
    note(fmt::format("{} tuples, {} reported steps, {} solved, {} skipped (--skip {:g})", s.tuples, s.reports, s.solves,
                     s.skipped, c.skip));
  if (context.timings)
    note(fmt::format("timing: {} tuples in {:.3f} s on {} ({:.0f} tuples/s)", s.tuples, seconds_since(start),
                     context.device.name, s.tuples / std::max(seconds_since(start), 1e-9)));
  return kExitOk;
}

}  // namespace

Runner add_cca_command(CLI::App& app) {
  auto options = std::make_shared<CcaOptions>();
  CLI::App* command = app.add_subcommand(
      "cca",
      "Canonical correlations of two streams over a sliding window of the last n tuples: a row\n"
      "'t<TAB>rho_1<TAB>...<TAB>rho_k' every --every tuples once the window is full (t = 1-based index of\n"
      "the newest tuple). The window's means and covariances are updated as tuples enter and leave;\n"
      "the correlations are solved exactly (Cholesky whitening, eigen solver) in float64.");
  command->footer(
      "Input: text (a tuple a line; commas, tabs or spaces; an empty line is a missing tuple, all zero) or\n"
      ".sks binary streams (see --convert); '-' reads standard input as it arrives and answers each tuple.\n"
      "Examples:\n"
      "  simkit cca --x-file x.csv --y-file y.csv --window 2048 --k 5 --ridge 1e-4\n"
      "  simkit cca --input xy.csv --x 0-255 --y 256-767 --window 2048 --every 100 --format json\n"
      "  simkit cca --input xy.csv --x 0-255 --y 256-767 --window 2048 --skip 0.05\n"
      "  simkit cca --streams s1.csv s2.csv s3.csv --window 512 --k 1\n"
      "  simkit cca --input xy.csv --x 0-255 --y 256-767 --convert xy.sks\n"
      "  mpirun -np 4 simkit cca --streams s*.csv --window 512 --k 1 -o pairs.tsv\n"
      "Under mpirun, --streams shares its stream pairs out among the ranks (and with --device cuda:all\n"
      "among the GPUs): rank 0 reads the tuples and writes rows equal to one process's. One pair of\n"
      "streams, and --convert, run on rank 0 alone.");
  command->add_option("--x-file", options->x_file, "X's tuples (p columns)");
  command->add_option("--y-file", options->y_file, "Y's tuples (q columns), line t beside X's line t");
  command->add_option("-i,--input", options->input, "one file holding X and Y (with --x and --y)");
  command->add_option("--x", options->x_columns, "X's columns of --input: ranges such as 0-255 or 0,2,4-9 (0-based)");
  command->add_option("--y", options->y_columns, "Y's columns of --input");
  command->add_option("--streams", options->streams, "many streams (a file each): every pair's correlations, 'a<TAB>b' after t");
  command->add_option("-n,--window", options->cca.window, "tuples in the sliding window (at least 2)");
  command->add_option("-k,--k", options->cca.k, "correlations a pair (at most the smaller dimension)")->capture_default_str();
  command->add_option("--every", options->cca.every, "report every this many tuples")->capture_default_str();
  command->add_option("--ridge", options->cca.ridge, "added to the diagonals of S11 and S22 (0: plain CCA)")->capture_default_str();
  command->add_option("--recenter", options->cca.recenter,
                      "recompute the moments exactly every this many tuples (0: every 16 windows)")
      ->capture_default_str();
  command->add_option("--skip", options->skip,
                      "solve again only when the tuples' accumulated change since the last solve passes this fraction "
                      "of the covariance's norm (the seed's threshold); reports in between repeat the last answer");
  command->add_option("--mode", options->mode, "exact, or approx (the seed's column sampling)")->capture_default_str();
  command->add_option("--epsilon", options->cca.epsilon, "approx: Johnson-Lindenstrauss accuracy in (0, 1)")->capture_default_str();
  command->add_option("--alpha", options->cca.alpha, "approx: oversampling factor")->capture_default_str();
  command->add_option("--seed", options->cca.seed, "approx: random numbers")->capture_default_str();
  command->add_flag("--approx-error", options->approx_error, "approx: solve exactly too and print both (JSON: exact_rho)");
  command->add_flag("--vectors", options->cca.vectors, "print the canonical vectors too");
  command->add_option("--format", options->format, "tsv or json (an object a line)")->capture_default_str();
  command->add_option("-o,--output", options->output, "output file (default: standard output)");
  command->add_option("--batch", options->batch, "tuples read at once from a file")->capture_default_str();
  command->add_option("--solve-batch", options->cca.batch,
                      "exact mode: report steps solved together (0: as many as the device takes, 1: one at a time)")
      ->capture_default_str();
  command->add_option("--convert", options->convert, "write the tuples (X then Y, or the streams side by side) as .sks and stop");
  add_common_options(*command, options->common);
  return [options]() { return run_cca(*options); };
}

}  // namespace simkit::cli
