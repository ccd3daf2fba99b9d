// The bytes of one file at a time, for the tasks that hash or compare many files.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "simkit/io.hpp"

namespace simkit::dedup {

// Small files are read into a buffer reused from file to file (mapping each costs more
// than reading it); large ones are mapped. The bytes stay valid until the next load; the
// same path loaded twice in a row is read once. Throws InputError naming a file that
// cannot be read.
class FileBytes {
 public:
  std::span<const unsigned char> load(const std::string& path);

 private:
  std::vector<unsigned char> buffer_;
  MappedFile mapped_;
  std::string path_;
  std::span<const unsigned char> bytes_;
};

}  // namespace simkit::dedup
