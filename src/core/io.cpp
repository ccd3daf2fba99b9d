#include "simkit/io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "simkit/error.hpp"

namespace simkit {

// ---------------------------------------------------------------- input

struct MappedFile::Storage {
  void* map = nullptr;
  std::size_t map_size = 0;
  std::vector<char> buffer;
  ~Storage() {
    if (map != nullptr) ::munmap(map, map_size);
  }
};

static std::vector<char> read_all(int fd, const std::string& path) {
  std::vector<char> data;
  std::size_t used = 0;
  data.resize(1 << 16);
  for (;;) {
    if (used == data.size()) data.resize(data.size() * 2);
    const ssize_t got = ::read(fd, data.data() + used, data.size() - used);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw FileError(Location{.file = path}, fmt::format("cannot read: {}", std::strerror(errno)), errno);
    }
    used += static_cast<std::size_t>(got);
  }
  data.resize(used);
  return data;
}

MappedFile MappedFile::open(const std::string& path) {
  MappedFile file;
  file.path_ = path;
  file.storage_ = std::make_shared<Storage>();
  if (path == "-") {
    file.storage_->buffer = read_all(STDIN_FILENO, path);
  } else {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw FileError(Location{.file = path}, fmt::format("cannot open: {}", std::strerror(errno)), errno);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      const int err = errno;
      ::close(fd);
      throw FileError(Location{.file = path}, fmt::format("cannot stat: {}", std::strerror(err)), err);
    }
    if (S_ISDIR(info.st_mode)) {
      ::close(fd);
      throw FileError(Location{.file = path}, "is a directory, expected a file", EISDIR);
    }
    if (S_ISREG(info.st_mode) && info.st_size > 0) {
      const auto size = static_cast<std::size_t>(info.st_size);
      void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      const int err = errno;
      ::close(fd);
      if (map == MAP_FAILED)
        throw Failure(fmt::format("{}: cannot map into memory: {}", path, std::strerror(err)));
      file.storage_->map = map;
      file.storage_->map_size = size;
      file.data_ = static_cast<const char*>(map);
      file.size_ = size;
      return file;
    }
    try {
      file.storage_->buffer = S_ISREG(info.st_mode) ? std::vector<char>() : read_all(fd, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
  file.data_ = file.storage_->buffer.data();
  file.size_ = file.storage_->buffer.size();
  return file;
}

MappedFile MappedFile::from_bytes(std::string name, std::string_view bytes) {
  MappedFile file;
  file.path_ = std::move(name);
  file.storage_ = std::make_shared<Storage>();
  file.storage_->buffer.assign(bytes.begin(), bytes.end());
  file.data_ = file.storage_->buffer.data();
  file.size_ = file.storage_->buffer.size();
  return file;
}

// (The advice values are not flags: each is given in a call of its own.)
void MappedFile::advise_sequential() const noexcept {
  if (storage_ && storage_->map != nullptr) ::madvise(storage_->map, storage_->map_size, MADV_SEQUENTIAL);
  advise_will_need();
}

void MappedFile::advise_will_need() const noexcept {
  if (storage_ && storage_->map != nullptr) ::madvise(storage_->map, storage_->map_size, MADV_WILLNEED);
}

// ---------------------------------------------------------------- interrupt cleanup

// Paths of named temporary files that must vanish if the process is interrupted.
// Fixed storage so that the signal handler only reads plain memory and calls unlink().
namespace {
constexpr int kSlots = 32;
constexpr std::size_t kPathMax = 4096;
std::array<std::atomic<bool>, kSlots> g_slot_claimed{};  // owned by some OutputFile
std::array<std::atomic<bool>, kSlots> g_slot_live{};     // path complete: handler may use it
std::array<std::array<char, kPathMax>, kSlots> g_slot_path{};

int register_temp(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slot_claimed[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_slot_path[i].data(), path.c_str(), path.size() + 1);
      g_slot_live[i].store(true);
      return i;
    }
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  g_slot_live[slot].store(false);
  g_slot_claimed[slot].store(false);
}

extern "C" void simkit_on_interrupt(int signo) {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_live[i].load()) ::unlink(g_slot_path[i].data());
  ::_exit(128 + signo);
}
}  // namespace

void install_interrupt_cleanup() {
  struct sigaction action {};
  action.sa_handler = simkit_on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGHUP, &action, nullptr);
}

// ---------------------------------------------------------------- output

static std::string unique_temp_name(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  std::random_device entropy;
  return (target.parent_path() /
          fmt::format(".{}.simkit-tmp-{}-{}-{:08x}", target.filename().string(), ::getpid(),
                      counter.fetch_add(1), entropy()))
      .string();
}

OutputFile::OutputFile(std::string path, bool write) : path_(std::move(path)) {
  if (!write) {
    nowhere_ = true;
    stream_ = std::fopen("/dev/null", "wb");
    if (stream_ == nullptr) throw Failure(fmt::format("/dev/null: cannot open: {}", std::strerror(errno)));
    return;
  }
  if (path_.empty() || path_ == "-") {
    to_stdout_ = true;
    stream_ = stdout;
    return;
  }
  std::filesystem::path target(path_);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  if (target.filename().empty())
    throw UsageError(fmt::format("output path {} names a directory, expected a file", quote(path_)));

  // An unnamed file leaves nothing behind whatever happens to the process.
  // (SIMKIT_NO_TMPFILE=1 takes the named fallback, so tests can exercise it.)
  static const bool named_only = std::getenv("SIMKIT_NO_TMPFILE") != nullptr;
  fd_ = named_only ? -1 : ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (named_only) errno = EOPNOTSUPP;
  if (fd_ < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == EROFS)
      throw FileError(Location{.file = path_}, fmt::format("cannot write here: {}", std::strerror(errno)), errno);
    temp_path_ = unique_temp_name(target);
    slot_ = register_temp(temp_path_);
    fd_ = ::open(temp_path_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      const int err = errno;
      unregister_temp(slot_);
      throw FileError(Location{.file = path_}, fmt::format("cannot write here: {}", std::strerror(err)), err);
    }
  }
  stream_ = ::fdopen(fd_, "wb");
  if (stream_ == nullptr) {
    const int err = errno;
    discard();
    throw Failure(fmt::format("{}: cannot open a stream: {}", path_, std::strerror(err)));
  }
  std::setvbuf(stream_, nullptr, _IOFBF, 1 << 20);
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::write(std::string_view bytes) {
  if (bytes.empty()) return;
  // Each 64 MiB written, the kernel is asked to start writing the file out
  // (sync_file_range, a hint): commit's fsync then waits for the last part alone, not for
  // the whole file (a million hashes' 350 MB of pairs).
  constexpr off_t kWriteOutBytes = off_t{64} << 20;
  const bool file = !to_stdout_ && fd_ >= 0;
  const off_t before = file ? ::ftello(stream_) : 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), stream_) != bytes.size())
    throw Failure(fmt::format("{}: write failed: {}", to_stdout_ ? "standard output" : path_,
                              std::strerror(errno)));
  if (file && before >= 0 && (before + static_cast<off_t>(bytes.size())) / kWriteOutBytes > before / kWriteOutBytes) {
    if (std::fflush(stream_) != 0)
      throw Failure(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
    (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);  // (refused by some file systems: no matter)
  }
}

void OutputFile::commit() {
  if (committed_) return;
  if (nowhere_) {
    discard();
    committed_ = true;
    return;
  }
  if (to_stdout_) {
    if (std::fflush(stdout) != 0)
      throw Failure(fmt::format("standard output: write failed: {}", std::strerror(errno)));
    committed_ = true;
    return;
  }
  if (std::fflush(stream_) != 0 || ::fsync(fd_) != 0)
    throw Failure(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  if (temp_path_.empty()) {
    // Give the unnamed file a unique name, then move it over the target in one step.
    temp_path_ = unique_temp_name(path_);
    slot_ = register_temp(temp_path_);
    const std::string self = fmt::format("/proc/self/fd/{}", fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp_path_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      const int err = errno;
      unregister_temp(slot_);
      slot_ = -1;
      temp_path_.clear();
      throw Failure(fmt::format("{}: cannot link the finished file: {}", path_, std::strerror(err)));
    }
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    throw Failure(fmt::format("{}: cannot move the finished file into place: {}", path_,
                              std::strerror(err)));
  }
  unregister_temp(slot_);
  slot_ = -1;
  temp_path_.clear();
  std::fclose(stream_);
  stream_ = nullptr;
  fd_ = -1;
  committed_ = true;
}

void OutputFile::discard() noexcept {
  if (to_stdout_) return;
  if (nowhere_) {
    if (stream_ != nullptr) std::fclose(stream_);
    stream_ = nullptr;
    return;
  }
  if (stream_ != nullptr) {
    std::fclose(stream_);
    stream_ = nullptr;
    fd_ = -1;
  } else if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  unregister_temp(slot_);
  slot_ = -1;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  OutputFile out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace simkit
