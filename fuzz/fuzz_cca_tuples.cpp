// libFuzzer target: the tuple readers of simkit cca. The first byte picks text (even) or
// .sks (odd); the rest is the stream. Accepted tuples must be finite and of the reader's
// width, and a small tracker must run over them (a singular window is an InputError).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "fuzz_common.hpp"
#include "simkit/cca.hpp"

namespace cca = simkit::cca;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool binary = data[0] % 2 == 1;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (bytes.empty()) bytes.push_back('\n');  // fmemopen needs a buffer
  std::FILE* stream = fmemopen(bytes.data(), size - 1 == 0 ? 1 : size - 1, "r");
  if (stream == nullptr) return 0;
  simkit::fuzz::guarded([&] {
    auto reader = binary ? cca::binary_reader(stream, "fuzz") : cca::text_reader(stream, "fuzz");
    const std::size_t width = reader->columns();
    std::vector<double> all, part;
    if (width == 0) {
      if (reader->next(part, 7) != 0) std::abort();  // no columns: no tuples either
      return;
    }
    while (reader->next(part, 7) > 0) {
      if (part.size() % width != 0) std::abort();
      for (double v : part)
        if (!std::isfinite(v)) std::abort();
      all.insert(all.end(), part.begin(), part.end());
    }
    if (width < 2 || width > 64 || all.empty()) return;
    cca::Options options;
    options.window = 3;
    options.k = 2;
    options.ridge = 1e-3;
    cca::Tracker tracker({{width / 2, width - width / 2}}, options);
    tracker.push(all.data(), all.size() / width, [&](const cca::Report& r) {
      for (double rho : r.pairs[0].rho)
        if (!(rho >= 0 && rho <= 1)) std::abort();
    });
  });
  std::fclose(stream);
  return 0;
}
