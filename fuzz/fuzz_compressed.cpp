// libFuzzer target: compressed text inputs (open_text: .gz, .bz2, .zst). The first byte
// picks the format; the rest is written to a file of that name. Bad data must end in
// InputError; accepted data must read the same a second time.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "fuzz_common.hpp"
#include "simkit/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kSuffix[] = {".gz", ".bz2", ".zst"};
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("fuzz-compressed-" + std::to_string(::getpid()) + kSuffix[data[0] % 3])).string();
  simkit::write_file_atomically(path, simkit::fuzz::as_text(data + 1, size - 1));
  const int status = simkit::fuzz::guarded([&] {
    const std::string once(simkit::open_text(path).text());
    if (simkit::open_text(path).text() != once) std::abort();
  });
  std::filesystem::remove(path);
  return status;
}
