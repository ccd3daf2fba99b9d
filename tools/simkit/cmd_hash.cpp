// simkit hash: CTPH signatures of files, in ssdeep's own list format.
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "cli.hpp"
#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"

namespace simkit::cli {

namespace {

struct HashOptions {
  std::size_t threads = 0;
  bool quiet = false;
  bool timings = false;
  std::vector<std::string> paths;
  bool recursive = false;
  bool bare = false;
  std::string output = "-";
};

int run_hash(const HashOptions& options) {
  // CPU only: no device to resolve (and no GPU runtime to start).
  const ThreadLimit threads(options.threads);
  set_progress_enabled(!options.quiet && ::isatty(STDERR_FILENO));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> files = dedup::list_files(options.paths, options.recursive);
  const auto listed = std::chrono::steady_clock::now();
  std::vector<std::string> signatures;
  {
    Progress progress("hashing", files.size(), "files");
    signatures = dedup::hash_files(files, &progress);
  }
  // Written only once every file is hashed: a failure leaves no partial list.
  OutputFile out(options.output, cluster::root());
  if (!options.bare) out.write(std::string(dedup::kSsdeepHeader) + "\n");
  for (std::size_t i = 0; i < files.size(); ++i) out.write(dedup::list_line(signatures[i], files[i]));
  out.commit();
  if (options.timings) {
    const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
    const auto now = std::chrono::steady_clock::now();
    note(fmt::format("listed {} files in {:.3f} s, hashed and wrote them in {:.3f} s", files.size(),
                     seconds(start, listed), seconds(listed, now)));
  }
  return kExitOk;
}

}  // namespace

Runner add_hash_command(CLI::App& app) {
  auto options = std::make_shared<HashOptions>();
  CLI::App* command = app.add_subcommand(
      "hash",
      "Prints the CTPH (fuzzy) signature of each file in ssdeep's format, byte for byte what\n"
      "ssdeep 2.14.1 prints: a header line, then 'blocksize:hash:hash,\"file\"' a line, the file\n"
      "named as given. ssdeep -m and -x read the list.");
  command->add_option("paths", options->paths, "files, or directories with -r")->required();
  command->add_flag("-r,--recursive", options->recursive, "hash every file below the directories given (sorted)");
  command->add_flag("--no-header", options->bare, "leave out ssdeep's header line");
  command->add_option("-o,--output", options->output, "output file (default: standard output)");
  command->add_option("--threads", options->threads, "CPU threads to use (0 = all cores)")->capture_default_str();
  command->add_flag("-q,--quiet", options->quiet, "no progress bar");
  command->add_flag("--timings", options->timings, "print the time taken on standard error");
  return [options]() { return run_hash(*options); };
}

}  // namespace simkit::cli
