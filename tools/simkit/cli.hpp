// Conventions every simkit command shares: --device, --threads, --memory-budget,
// --quiet, --timings, -o/--output, --format; error lines and exit codes.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <vector>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>

#include "simkit/device.hpp"
#include "simkit/threads.hpp"

namespace simkit {
class OutputFile;
}

namespace simkit::cli {

// Exit codes: 0 ok, 2 bad input or usage, 1 failure; 130 after SIGINT.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

struct CommonOptions {
  std::string device = "auto";
  std::size_t threads = 0;
  std::string memory_budget;
  bool quiet = false;
  bool timings = false;
};

// Adds --device, --threads, --memory-budget, --quiet and --timings to a command.
void add_common_options(CLI::App& command, CommonOptions& options);
// After parsing, before any CUDA call: the command that runs hides the GPUs its --device
// does not name from the driver (simkit::hide_unused_gpus), which then starts only its own.
void hide_unused_gpus(const CLI::App& app);

// What a command needs after its options are parsed.
struct Context {
  Device device;
  std::size_t memory_budget = 0;  // 0 = automatic
  bool timings = false;
  std::unique_ptr<ThreadLimit> threads;
};
// resolve_device false: context.device is left as the CPU, for a command that resolves
// the device itself (embed, overlapping the driver's start with its counting).
Context make_context(const CommonOptions& options, bool resolve_device = true);

// The device of a job whose size is known: as resolve_device, except that --device auto
// takes the CPU when `gpu_pays_off` is false (a job the GPU would finish later than the
// CPU, its driver's start counted: each command's rule and its measurement are in
// docs/gpu.md). An explicit --device cuda is always obeyed.
Device device_for_job(const CommonOptions& options, bool gpu_pays_off);

// The device found, and readied by `prepare` (called with each GPU's index: its context
// made, the job's kernels loaded), on a thread of its own while the command reads its
// input. --device auto goes on with the CPU when its GPU cannot be readied; a GPU named
// outright is then an error, thrown by device.get(). Several GPUs are readied side by
// side and handed over once the first is ready (the driver makes their contexts one at a
// time): the command's workers on the others wait in the driver until theirs are made,
// and a later GPU that cannot be readied is noted and left to its worker's own error.
struct DeviceStart {
  std::promise<Device> promise;
  std::shared_future<Device> device = promise.get_future().share();
  // The device chosen, before it is readied (its GPUs' indices, for host work that needs
  // a GPU's context and may begin while the others start), or the error choosing it.
  std::promise<Device> chosen_promise;
  std::shared_future<Device> chosen = chosen_promise.get_future().share();
  std::jthread thread;

  void begin(const CommonOptions& common, bool gpu_pays_off, std::function<void(int index)> prepare);
  bool started() const { return thread.joinable(); }
  // work(the first GPU's index) once the device is chosen, where it is a GPU: host work a
  // GPU's context serves (page-locking what every GPU uploads) done while the GPUs start.
  // Returns whether it ran; an error choosing the device, or work's Error, is left to
  // where the command takes the device (and the job meets it again).
  bool with_chosen_gpu(const std::function<void(int index)>& work);
};

// Writes the text of `items` items in order, formatted on all cores a slice of at most
// `slice` items at a time (a bounded number of slices at once, so memory stays bounded;
// fewer items, smaller slices, so that every core has some): format(begin, end, text)
// appends the text of items [begin, end).
void write_in_slices(OutputFile& out, std::size_t items, std::size_t slice,
                     const std::function<void(std::size_t begin, std::size_t end, std::string& text)>& format);

// Frees `things` (large containers the rest of a command does not need: rows, parsed
// signatures) on a thread of its own, beside what follows, usually the writing; the thread
// is joined where the returned object goes. Freed at once if no thread can be started.
template <typename... Things>
std::optional<std::jthread> free_beside(Things&&... things) {
  static_assert((!std::is_lvalue_reference_v<Things> && ...), "free_beside takes what it frees by std::move");
  try {
    return std::jthread([... kept = std::move(things)]() mutable { (Things(std::move(kept)), ...); });
  } catch (const std::system_error&) {
    return std::nullopt;
  }
}

// Prints one line "simkit: <what>" on standard error (timings, notes).
void note(const std::string& line);

// The files named by `paths` (files, and every file below directories, sorted) and
// their total size in bytes (for a progress bar over their text).
std::vector<std::string> text_files(const std::vector<std::string>& paths, std::uint64_t& bytes);

// Seconds since `start`, for --timings.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Each command registers itself and returns the function that runs it.
using Runner = std::function<int()>;
Runner add_neighbors_command(CLI::App& app);
Runner add_devices_command(CLI::App& app);
Runner add_hash_command(CLI::App& app);
Runner add_dedup_command(CLI::App& app);
Runner add_postings_command(CLI::App& app);
Runner add_disco_command(CLI::App& app);
Runner add_embed_command(CLI::App& app);
Runner add_lvq_command(CLI::App& app);
Runner add_cca_command(CLI::App& app);
Runner add_bench_command(CLI::App& app);

}  // namespace simkit::cli
