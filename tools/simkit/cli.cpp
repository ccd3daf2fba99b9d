#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <oneapi/tbb/parallel_pipeline.h>

#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"

namespace simkit::cli {

namespace {
// Each command's common options, by the command that owns them.
std::vector<std::pair<const CLI::App*, CommonOptions*>>& common_options_of() {
  static std::vector<std::pair<const CLI::App*, CommonOptions*>> all;
  return all;
}
}  // namespace

void hide_unused_gpus(const CLI::App& app) {
  const CLI::App* command = &app;  // the deepest command given: the one that runs
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  for (auto& [owner, options] : common_options_of())
    if (owner == command) simkit::hide_unused_gpus(options->device);
}

void add_common_options(CLI::App& command, CommonOptions& options) {
  common_options_of().emplace_back(&command, &options);
  command.add_option("--device", options.device, "auto, cpu, cuda, cuda:N or cuda:all (auto: a GPU when present and the job large enough to gain from it)")
      ->capture_default_str();
  command.add_option("--threads", options.threads, "CPU threads to use (0 = all cores)")
      ->capture_default_str();
  command.add_option("--memory-budget", options.memory_budget,
                     "memory the job may use for blocks, e.g. 512M or 8G (default: from the device)");
  command.add_flag("-q,--quiet", options.quiet, "no progress bars");
  command.add_flag("--timings", options.timings, "print timings on standard error");
}

namespace {

// Seconds since this process started (its libraries loaded, MPI started): from the
// kernel's start time of the process, in clock ticks since boot; 0 where unknown.
double process_age() {
  std::ifstream stat("/proc/self/stat"), uptime("/proc/uptime");
  std::string line;
  double up = 0;
  if (!std::getline(stat, line) || !(uptime >> up)) return 0;
  // Field 22 (starttime) counts from the field after the command's closing parenthesis.
  const std::size_t name_end = line.rfind(')');
  if (name_end == std::string::npos || name_end + 2 > line.size()) return 0;
  std::istringstream rest(line.substr(name_end + 2));
  std::string field;
  int at = 2;
  while (at < 22 && rest >> field) ++at;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (at != 22 || ticks <= 0) return 0;
  return std::max(0.0, up - std::strtod(field.c_str(), nullptr) / static_cast<double>(ticks));
}

}  // namespace

Context make_context(const CommonOptions& options, bool resolve) {
  Context context;
  context.device.name = "cpu";
  if (resolve) context.device = resolve_device(parse_device(options.device));
  if (!options.memory_budget.empty()) context.memory_budget = parse_byte_size(options.memory_budget);
  context.timings = options.timings;
  context.threads = std::make_unique<ThreadLimit>(options.threads);
  if (options.timings) note(fmt::format("timing: the command began {:.3f} s after the process started", process_age()));
  // OpenMPI binds each rank to one core when it starts two or fewer: the rank's host work
  // (reading, building rows, merging, writing) then runs on that core alone.
  if (options.timings && cluster::size() > 1 && cores_allowed() == 1 && cores_online() > 2 * static_cast<std::size_t>(std::max(cluster::local_size(), 1)))
    note(fmt::format("timing: rank 0 may run on 1 of the {} cores of {} (the launcher binds each rank to a core); "
                     "mpirun --bind-to none (or --map-by slot:PE=N) gives the ranks more",
                     cores_online(), cluster::host_name()));
  set_progress_enabled(!options.quiet && ::isatty(STDERR_FILENO) && cluster::root());
  return context;
}

Device device_for_job(const CommonOptions& options, bool gpu_pays_off) {
  const DeviceSpec spec = parse_device(options.device);
  if (spec.kind == DeviceSpec::Kind::Auto && !gpu_pays_off) {
    Device cpu;
    cpu.name = "cpu";
    return cpu;
  }
  return resolve_device(spec);
}

void DeviceStart::begin(const CommonOptions& common, bool gpu_pays_off, std::function<void(int index)> prepare) {
  thread = std::jthread([this, &common, gpu_pays_off, prepare = std::move(prepare)] {
    std::atomic<bool> handed{false};  // the device given to the command
    const auto hand = [&](const Device& device) {
      if (!handed.exchange(true)) promise.set_value(device);
    };
    bool chose = false;
    try {
      const Device found = device_for_job(common, gpu_pays_off);
      chosen_promise.set_value(found);
      chose = true;
      try {
        if (found.cuda && prepare) {
          if (found.indices.empty()) prepare(found.index);
          // Each GPU readied on a thread of its own; the driver makes their contexts one at
          // a time, so the command gets its GPUs once the first is ready: a job that deals
          // its work as its GPUs ask starts on that one, and the others' workers wait in
          // the driver until theirs are made.
          run_parts(found.indices.size(), [&](std::size_t i) {
            prepare(found.indices[i]);
            hand(found);
          });
        }
      } catch (const Failure& e) {
        if (handed) {  // a later GPU: the command's worker on it meets its own failure
          note(fmt::format("a GPU could not be readied: {}", e.what()));
          return;
        }
        if (parse_device(common.device).kind != DeviceSpec::Kind::Auto) throw;
        hand(device_for_job(common, false));
        return;
      }
      hand(found);
    } catch (...) {
      if (!chose) chosen_promise.set_exception(std::current_exception());
      if (!handed.exchange(true)) promise.set_exception(std::current_exception());
    }
  });
}

bool DeviceStart::with_chosen_gpu(const std::function<void(int index)>& work) {
  if (!started()) return false;
  try {
    const Device device = chosen.get();
    if (!device.cuda) return false;
    work(device.index);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void write_in_slices(OutputFile& out, std::size_t items, std::size_t slice,
                     const std::function<void(std::size_t begin, std::size_t end, std::string& text)>& format) {
  constexpr std::size_t kAtOnce = 64, kSmallestSlice = 1024;
  // (152,258 pairs in slices of 65,536 kept 3 of an H200 host's 16 cores busy.)
  slice = std::max<std::size_t>(std::min(slice, std::max(kSmallestSlice, (items + kAtOnce - 1) / kAtOnce)), 1);
  const std::size_t slices = (items + slice - 1) / slice;
  // Slices formatted on all cores while those before them are written, in order (a
  // million hashes' 350 MB of pairs: the writing no longer waits for each round's
  // formatting); at most kAtOnce slices held at once.
  std::size_t next = 0;
  tbb::parallel_pipeline(
      kAtOnce,
      tbb::make_filter<void, std::size_t>(tbb::filter_mode::serial_in_order,
                                          [&](tbb::flow_control& control) -> std::size_t {
                                            if (next == slices) control.stop();
                                            return next++;
                                          }) &
          tbb::make_filter<std::size_t, std::string>(tbb::filter_mode::parallel,
                                                     [&](std::size_t k) {
                                                       std::string text;
                                                       const std::size_t begin = k * slice;
                                                       format(begin, std::min(items, begin + slice), text);
                                                       return text;
                                                     }) &
          tbb::make_filter<std::string, void>(tbb::filter_mode::serial_in_order,
                                              [&](const std::string& text) { out.write(text); }));
}

std::vector<std::string> text_files(const std::vector<std::string>& paths, std::uint64_t& bytes) {
  std::vector<std::string> files = dedup::list_files(paths, true);
  bytes = 0;
  for (const std::string& f : files) bytes += MappedFile::open(f).size();
  return files;
}

void note(const std::string& line) {
  if (!cluster::root()) return;  // one voice under mpirun
  std::fprintf(stderr, "simkit: %s\n", one_line(line).c_str());
  std::fflush(stderr);
}

}  // namespace simkit::cli
