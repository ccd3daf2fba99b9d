// Finding and hashing the files of `simkit hash` (see simkit/dedup.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <span>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include "core/text.hpp"
#include "dedup/file_bytes.hpp"
#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"

namespace simkit::dedup {

namespace fs = std::filesystem;

std::vector<std::string> list_files(const std::vector<std::string>& paths, bool recursive) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw FileError(Location{path}, "no such file or directory", ENOENT);
    if (!fs::is_directory(status)) {
      files.push_back(path);
      continue;
    }
    if (!recursive) throw FileError(Location{path}, "is a directory (use -r to hash the files below it)", EISDIR);
    // Symbolic links are followed, as ssdeep -r does (a directory reached by two paths is
    // listed under both), except a link back to a directory being listed (a cycle).
    std::vector<std::string> found;
    std::vector<fs::path> ancestors{fs::canonical(path, ec)};  // ancestors[d]: the directory at depth d - 1
    const auto options = fs::directory_options::skip_permission_denied | fs::directory_options::follow_directory_symlink;
    for (auto it = fs::recursive_directory_iterator(path, options, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      std::error_code kind;
      if (it->is_directory(kind)) {
        ancestors.resize(static_cast<std::size_t>(it.depth()) + 1);
        fs::path here = fs::canonical(it->path(), kind);
        if (std::find(ancestors.begin(), ancestors.end(), here) != ancestors.end())
          it.disable_recursion_pending();
        else
          ancestors.push_back(std::move(here));
      } else if (it->is_regular_file(kind)) {
        found.push_back(it->path().string());
      }
    }
    if (ec) throw FileError(Location{path}, "cannot list the directory: " + ec.message(), ec.value());
    if (found.empty()) throw InputError(Location{path}, "the directory holds no file");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

namespace {

constexpr std::size_t kSmallFile = std::size_t{1} << 20;

// Reads a regular file of at most kSmallFile bytes into `buffer`; false when it is larger
// (or not a regular file: the caller maps it, which also reports errors).
bool read_small_file(const std::string& path, std::vector<unsigned char>& buffer) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > kSmallFile) {
    ::close(fd);
    return false;
  }
  buffer.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n = ::read(fd, buffer.data() + got, buffer.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got != buffer.size()) return false;  // changed or failed under us: the mapping path reports it
  return true;
}

}  // namespace

std::span<const unsigned char> FileBytes::load(const std::string& path) {
  if (path == path_) return bytes_;
  path_.clear();  // until the load succeeds
  mapped_ = MappedFile{};
  if (read_small_file(path, buffer_)) {
    bytes_ = buffer_;
  } else {
    mapped_ = MappedFile::open(path);
    mapped_.advise_sequential();
    bytes_ = {reinterpret_cast<const unsigned char*>(mapped_.data()), mapped_.size()};
  }
  path_ = path;
  return bytes_;
}

std::vector<std::string> hash_files(const std::vector<std::string>& files, Progress* progress) {
  // Under mpirun each rank hashes its share of the files, then every rank gets them all.
  const RowRange mine = share_rows(files.size(), false, static_cast<std::size_t>(cluster::rank()),
                                   static_cast<std::size_t>(cluster::size()));
  std::vector<std::string> signatures(mine.size());
  // Each file is read, hashed and released by one task; the first failure stops the rest.
  tbb::enumerable_thread_specific<FileBytes> readers;
  tbb::parallel_for(mine.begin, mine.end, [&](std::size_t i) {
    const std::span<const unsigned char> bytes = readers.local().load(files[i]);
    signatures[i - mine.begin] = ctph::hash(bytes);
    if (progress != nullptr) progress->advance(1);
  });
  return cluster::allgather_strings(signatures);
}

}  // namespace simkit::dedup
