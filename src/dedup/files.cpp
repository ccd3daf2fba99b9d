// Finding and hashing the files of `simkit hash` (see simkit/dedup.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <span>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <system_error>

#include <fmt/format.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_for_each.h>
#include <oneapi/tbb/parallel_sort.h>

#include "core/text.hpp"
#include "dedup/file_bytes.hpp"
#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"

namespace simkit::dedup {

namespace fs = std::filesystem;

namespace {

// A folder by its device and inode: the same folder whatever the path (links, mounts).
struct FolderId {
  dev_t device;
  ino_t inode;
  friend bool operator==(const FolderId&, const FolderId&) = default;
};

// A folder to list, and the folders above it on the way there (its own id last).
struct Folder {
  fs::path path;
  std::vector<FolderId> chain;
};

// Every regular file below `top`, unsorted. Each folder is listed by a task of its own, so
// that thousands of folders are walked on every core (bench/results/dedup.md: the 20,000
// inputs of the edit-rate command found in about 0.1 s, against 0.125 s one folder after
// another, most of it the GPU driver's start beside the walk).
// Symbolic links are followed, as ssdeep -r does (a folder reached by two paths is listed
// under both), except a link back to a folder on the way (a cycle); folders that may not
// be read are passed over. Other errors: FileError naming `top`.
std::vector<std::string> files_below(const std::string& top) {
  struct stat st {};
  if (::stat(top.c_str(), &st) != 0) throw FileError(Location{top}, "cannot list the directory", errno);
  tbb::enumerable_thread_specific<std::vector<std::string>> found;
  std::mutex error_mutex;
  std::error_code error;
  const std::vector<Folder> first{Folder{top, {FolderId{st.st_dev, st.st_ino}}}};
  tbb::parallel_for_each(first.begin(), first.end(), [&](const Folder& folder, tbb::feeder<Folder>& feeder) {
    std::vector<std::string>& mine = found.local();
    std::error_code ec;
    for (auto it = fs::directory_iterator(folder.path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::error_code kind;
      if (it->is_directory(kind)) {  // (through a link too)
        struct stat sub {};
        if (::stat(it->path().c_str(), &sub) != 0) continue;
        const FolderId id{sub.st_dev, sub.st_ino};
        if (std::find(folder.chain.begin(), folder.chain.end(), id) != folder.chain.end()) continue;  // a cycle
        Folder next{it->path(), folder.chain};
        next.chain.push_back(id);
        feeder.add(std::move(next));
      } else if (it->is_regular_file(kind)) {
        mine.push_back(it->path().string());
      }
    }
    if (ec) {
      const std::lock_guard lock(error_mutex);
      if (!error) error = ec;
    }
  });
  if (error) throw FileError(Location{top}, "cannot list the directory: " + error.message(), error.value());
  std::vector<std::string> files;
  for (std::vector<std::string>& part : found) files.insert(files.end(), std::make_move_iterator(part.begin()),
                                                            std::make_move_iterator(part.end()));
  return files;
}

}  // namespace

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
    std::vector<std::string> found = files_below(path);
    if (found.empty()) throw InputError(Location{path}, "the directory holds no file");
    tbb::parallel_sort(found.begin(), found.end());
    files.insert(files.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
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
