// Helpers shared by simkit's tests: seeded random data, temporary folders, GPU checks,
// and running the simkit program itself.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "simkit/device.hpp"

namespace simkit::test {

// A fresh seed per run (printed on failure through the test's trace), or SIMKIT_TEST_SEED.
std::uint64_t test_seed();

class Random {
 public:
  Random();
  explicit Random(std::uint64_t seed) : engine_(seed), seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  float uniform(float lo = -1, float hi = 1) { return std::uniform_real_distribution<float>(lo, hi)(engine_); }
  int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine_); }
  std::vector<float> floats(std::size_t n, float lo = -1, float hi = 1);
  // Small integers: sums of products stay exact in float32, and ties are frequent.
  std::vector<float> small_integers(std::size_t n, int lo, int hi);
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
  std::uint64_t seed_;
};

// A folder removed with all its contents when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& bytes);

// `text` compressed by zlib (gzip), libbz2 and libzstd, for the tests of compressed inputs.
std::string gzip(const std::string& text);
std::string bzip2(const std::string& text);
std::string zstd(const std::string& text);

bool gpu_available();

// SIMKIT_TEST_QUICK=1: smaller shapes for slow instrumented runs (compute-sanitizer);
// every code path the full shapes reach is still reached.
bool quick();

// Sets an environment variable for the life of the object, then restores it (the GPU
// engine reads SIMKIT_GPU_TILE_MB and SIMKIT_GPU_FUSED at every run).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

// Folder of the project's source tree (for data/samples and tests/bad-inputs).
std::filesystem::path source_dir();

// A program's path: where the build put it (`built`), or where the environment variable
// `env_name` says (a staged copy on another machine).
std::string program_path(const char* env_name, const std::string& built);

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs the simkit program with `args`, feeding `input` on standard input.
RunResult run_simkit(const std::vector<std::string>& args, const std::string& input = "");

// Whether the build has MPI and found its launcher (mpirun).
bool mpi_available();
// Runs simkit under the MPI launcher as `ranks` processes (rank 0 gets `input`).
RunResult run_simkit_mpi(int ranks, const std::vector<std::string>& args, const std::string& input = "");
// Runs `program` (its path, then its arguments) under the MPI launcher as `ranks`
// processes, stopped after `seconds` (exit code 124): for a test of ranks that could wait
// on each other forever.
RunResult run_mpi_bounded(int ranks, int seconds, const std::vector<std::string>& program);
// One rank each with its own arguments (MPMD), e.g. ranks given different input files.
RunResult run_simkit_mpmd(const std::vector<std::vector<std::string>>& rank_args, const std::string& input = "");
// Whether two outputs are the same; when not, the first line that differs (outputs of
// thousands of lines: a full diff would drown the report).
::testing::AssertionResult same_text(const std::string& got, const std::string& want);
// The job alone (which must succeed) and under 2 and 3 ranks (shares that do not divide
// evenly): the same exit code and standard output. Returns the lone run.
RunResult expect_same_under_mpi(const std::vector<std::string>& args, const std::string& input = "");

// A simkit process started with a pipe on its standard input, output and errors to files.
struct Child {
  int pid = -1;
  int input = -1;  // write end of the child's standard input
  std::filesystem::path out, err;
};
Child spawn_simkit(const std::vector<std::string>& args, const std::filesystem::path& dir,
                   const std::vector<std::string>& env = {});
// Sends a signal and waits; returns the exit code (128 + signal when killed by it).
int signal_and_wait(Child& child, int signo);

// The standard output of a shell command (a peer program such as ssdeep).
std::string run_shell(const std::string& command);

// Runs simkit with `args` and expects a refusal: exit 2, one error line containing
// `words`, and no file at `output`.
void expect_refused(const std::vector<std::string>& args, const std::string& words, const std::filesystem::path& output);

// The message of the InputError `body` throws, or "(accepted)" when it throws none
// (any other exception goes on to the test).
std::string input_error_of(const std::function<void()>& body);

// Lines of a text (without their newlines; a final newline ends the last line).
std::vector<std::string> lines_of(const std::string& text);

}  // namespace simkit::test

#define SIMKIT_REQUIRE_MPI()                                                                  \
  do {                                                                                        \
    if (!::simkit::test::mpi_available()) GTEST_SKIP() << "this simkit was built without MPI"; \
  } while (0)

#define SIMKIT_REQUIRE_GPU()                                                 \
  do {                                                                       \
    if (!::simkit::test::gpu_available()) GTEST_SKIP() << "no CUDA GPU here"; \
  } while (0)
