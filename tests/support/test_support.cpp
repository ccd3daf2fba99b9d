#include "test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
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

// Both may be moved: the GPU runner runs the tests from a staged copy elsewhere.
std::filesystem::path source_dir() {
  const char* env = std::getenv("SIMKIT_SOURCE_DIR");
  return env != nullptr && *env != '\0' ? env : SIMKIT_SOURCE_DIR;
}

static std::string simkit_binary() {
  const char* env = std::getenv("SIMKIT_BINARY");
  return env != nullptr && *env != '\0' ? env : SIMKIT_BINARY;
}

static std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

RunResult run_simkit(const std::vector<std::string>& args, const std::string& input) {
  TempDir dir;
  write_file(dir / "in", input);
  std::string command = shell_quote(simkit_binary());
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " < " + shell_quote((dir / "in").string()) + " > " + shell_quote((dir / "out").string()) +
             " 2> " + shell_quote((dir / "err").string());
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(dir / "out");
  result.err = read_file(dir / "err");
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace simkit::test
