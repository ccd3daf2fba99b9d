#include "test_support.hpp"

#include "simkit/error.hpp"

#include <bzlib.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <sstream>

namespace simkit::test {

std::uint64_t test_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* env = std::getenv("SIMKIT_TEST_SEED")) return std::strtoull(env, nullptr, 10);
    return static_cast<std::uint64_t>(std::random_device{}()) << 32 ^
           static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return seed;
}

Random::Random() : Random(test_seed() + static_cast<std::uint64_t>(
                              std::hash<std::string>{}(::testing::UnitTest::GetInstance()
                                                           ->current_test_info()
                                                           ->name()))) {
  ::testing::Test::RecordProperty("seed", std::to_string(seed_));
  std::printf("[ seed     ] SIMKIT_TEST_SEED=%llu\n", static_cast<unsigned long long>(test_seed()));
}

std::vector<float> Random::floats(std::size_t n, float lo, float hi) {
  std::vector<float> out(n);
  for (float& x : out) x = uniform(lo, hi);
  return out;
}

std::vector<float> Random::small_integers(std::size_t n, int lo, int hi) {
  std::vector<float> out(n);
  for (float& x : out) x = static_cast<float>(integer(lo, hi));
  return out;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "simkit-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

bool gpu_available() { return cuda_built() && cuda_device_count() > 0; }

bool quick() {
  const char* env = std::getenv("SIMKIT_TEST_QUICK");
  return env != nullptr && *env != '\0' && *env != '0';
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name); old != nullptr) {
    had_ = true;
    old_ = old;
  }
  setenv(name, value, 1);
}

ScopedEnv::~ScopedEnv() {
  if (had_)
    setenv(name_.c_str(), old_.c_str(), 1);
  else
    unsetenv(name_.c_str());
}

// Both may be moved: the GPU runner runs the tests from a staged copy elsewhere. A tree
// without the samples fails the test that asked, with one line saying what to set (a
// throw inside a test body is a failure of that test, not a crash).
std::filesystem::path source_dir() {
  const char* env = std::getenv("SIMKIT_SOURCE_DIR");
  const std::filesystem::path dir = env != nullptr && *env != '\0' ? env : SIMKIT_SOURCE_DIR;
  if (!std::filesystem::is_directory(dir / "data/samples"))
    throw std::runtime_error("no data/samples under " + dir.string() +
                             ": set SIMKIT_SOURCE_DIR to simkit's source tree (the tests read their data there)");
  return dir;
}

std::string program_path(const char* env_name, const std::string& built) {
  const char* env = std::getenv(env_name);
  return env != nullptr && *env != '\0' ? env : built;
}

static std::string simkit_binary() { return program_path("SIMKIT_BINARY", SIMKIT_BINARY); }

static std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

namespace {

// Runs a shell command line with `input` on its standard input. Tests compare what the
// program writes to standard error, so the phase lines a caller's environment may ask for
// (set for a benchmark) stay off.
RunResult run_command(std::string command, const std::string& input) {
  TempDir dir;
  write_file(dir / "in", input);
  command = "env -u SIMKIT_ENGINE_STATS -u SIMKIT_POSTINGS_PHASES -u SIMKIT_EMBED_STATS -u SIMKIT_CCA_PHASES " + command;
  command += " < " + shell_quote((dir / "in").string()) + " > " + shell_quote((dir / "out").string()) +
             " 2> " + shell_quote((dir / "err").string());
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(dir / "out");
  result.err = read_file(dir / "err");
  return result;
}

std::string simkit_command(const std::vector<std::string>& args) {
  std::string command = shell_quote(simkit_binary());
  for (const std::string& a : args) command += " " + shell_quote(a);
  return command;
}

// The MPI launcher found at build time (SIMKIT_MPIEXEC may name another), with what it
// needs in a test: running as root (containers, CI), more ranks than cores, shared-memory
// transport without the cross-process copies some sandboxes forbid, ranks bound to no
// core (each sees the cores one process would: OpenBLAS's sums, as in embed's SVD,
// follow its thread count), and quiet about the exit codes (the tests read them).
// Under ASan the ranks skip the leak check: OpenMPI unloads its components before
// LeakSanitizer reports what they kept, so their blocks come from "<unknown module>" and
// no suppression can name them. The same simkit code is leak-checked in every
// single-process test, where cluster::start skips MPI.
std::string launcher() {
  const char* env = std::getenv("SIMKIT_MPIEXEC");
  const std::string exe = env != nullptr && *env != '\0' ? env : SIMKIT_MPIEXEC;
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none "
         "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" " +
         shell_quote(exe) + " --oversubscribe --bind-to none -q";
}

}  // namespace

RunResult run_simkit(const std::vector<std::string>& args, const std::string& input) {
  return run_command(simkit_command(args), input);
}

bool mpi_available() { return std::string(SIMKIT_MPIEXEC) != "" || std::getenv("SIMKIT_MPIEXEC") != nullptr; }

// The launcher starting `ranks` processes of the command that follows.
static std::string launch(int ranks) { return launcher() + " -np " + std::to_string(ranks) + " "; }

RunResult run_simkit_mpi(int ranks, const std::vector<std::string>& args, const std::string& input) {
  return run_command(launch(ranks) + simkit_command(args), input);
}

RunResult run_mpi_bounded(int ranks, int seconds, const std::vector<std::string>& program) {
  std::string command = "timeout -k 10 " + std::to_string(seconds) + " env " + launch(ranks);  // (env: the launcher's variables)
  for (const std::string& a : program) command += " " + shell_quote(a);
  return run_command(command, "");
}

RunResult run_simkit_mpmd(const std::vector<std::vector<std::string>>& rank_args, const std::string& input) {
  std::string command = launcher();
  for (std::size_t r = 0; r < rank_args.size(); ++r)
    command += (r == 0 ? " -np 1 " : " : -np 1 ") + simkit_command(rank_args[r]);
  return run_command(command, input);
}

::testing::AssertionResult same_text(const std::string& got, const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  const std::vector<std::string> a = lines_of(got), b = lines_of(want);
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i)
    if (i >= a.size() || i >= b.size() || a[i] != b[i])
      return ::testing::AssertionFailure() << "line " << i + 1 << " of " << a.size() << " (want " << b.size()
                                           << "): " << (i < a.size() ? a[i] : "(none)") << " | want "
                                           << (i < b.size() ? b[i] : "(none)");
  return ::testing::AssertionFailure() << "outputs differ";
}

RunResult expect_same_under_mpi(const std::vector<std::string>& args, const std::string& input) {
  const RunResult alone = run_simkit(args, input);
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_FALSE(alone.out.empty()) << "a job with something to share: " << args.front();
  for (const int ranks : {2, 3}) {
    const RunResult r = run_simkit_mpi(ranks, args, input);
    EXPECT_EQ(r.exit_code, alone.exit_code) << ranks << " ranks: " << r.err;
    EXPECT_TRUE(same_text(r.out, alone.out)) << ranks << " ranks";
  }
  return alone;
}

Child spawn_simkit(const std::vector<std::string>& args, const std::filesystem::path& dir,
                   const std::vector<std::string>& env) {
  Child child;
  child.out = dir / "child.out";
  child.err = dir / "child.err";
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const std::string binary = simkit_binary();
  std::vector<std::string> argv_strings = {binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[0], 0);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    const int out = ::open(child.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(child.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    for (std::string& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[0]);
  child.pid = pid;
  child.input = pipe_fds[1];
  return child;
}

int signal_and_wait(Child& child, int signo) {
  ::kill(child.pid, signo);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  if (child.input >= 0) ::close(child.input);
  child.input = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string run_shell(const std::string& command) {
  std::string out;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

void expect_refused(const std::vector<std::string>& args, const std::string& words, const std::filesystem::path& output) {
  const RunResult r = run_simkit(args);
  EXPECT_EQ(r.exit_code, 2) << args.back();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(output)) << args.back();
}

std::string input_error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string bzip2(const std::string& text) {
  std::string out(text.size() + text.size() / 100 + 700, '\0');
  auto size = static_cast<unsigned>(out.size());
  EXPECT_EQ(BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(text.data()),
                                     static_cast<unsigned>(text.size()), 9, 0, 0),
            BZ_OK);
  out.resize(size);
  return out;
}

std::string zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace simkit::test
