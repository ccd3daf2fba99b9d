// libFuzzer target: compressed text inputs (open_text: .gz, .bz2, .zst). The first byte
// picks the format; the rest is written to a file of that name. Bad data must end in
// InputError; accepted data must read the same a second time.
#include <cstdlib>
#include <string>

#include "fuzz_common.hpp"
#include "simkit/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kSuffix[] = {".gz", ".bz2", ".zst"};
  const simkit::fuzz::ScratchFile file(std::string("compressed") + kSuffix[data[0] % 3]);
  simkit::write_file_atomically(file.path, simkit::fuzz::as_text(data + 1, size - 1));
  return simkit::fuzz::guarded([&] {
    const std::string once(simkit::open_text(file.path).text());
    if (simkit::open_text(file.path).text() != once) std::abort();
  });
}
