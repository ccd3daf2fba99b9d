// libFuzzer target: simkit's LVQ data readers (simkit lvq train/predict/convert). The first
// byte picks the format: 0 CSV (label first), 1 TSV (label last), 2 .npy, 3 idx images,
// 4 .skl; the rest is the file. An accepted set must be consistent (finite features,
// labels naming classes) and survive the .skl round trip unchanged.
#include <cmath>
#include <cstdlib>

#include "fuzz_common.hpp"
#include "simkit/io.hpp"
#include "simkit/lvq.hpp"

namespace lvq = simkit::lvq;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const suffixes[] = {"data.csv", "data.tsv", "data.npy", "images-idx3-ubyte", "data.skl"};
  const unsigned pick = data[0] % 5;
  return simkit::fuzz::guarded([&] {
    const simkit::fuzz::ScratchFile file(suffixes[pick]);
    simkit::write_file_atomically(file.path, simkit::fuzz::as_text(data + 1, size - 1));
    lvq::ReadOptions options;
    if (pick == 1) options.label_column = lvq::LabelColumn::last;
    const lvq::Dataset d = lvq::read_dataset(file.path, options);
    if (d.rows == 0 || d.dims == 0 || d.features.size() != d.rows * d.dims) std::abort();
    for (const float v : d.features)
      if (!std::isfinite(v)) std::abort();
    if (!d.labels.empty() && d.labels.size() != d.rows) std::abort();
    for (const std::uint32_t l : d.labels)
      if (l >= d.classes.size()) std::abort();
    if (d.features.size() > 100000) return;
    const simkit::fuzz::ScratchFile copy("copy.skl");
    lvq::write_dataset(d, copy.path);
    const lvq::Dataset back = lvq::read_dataset(copy.path);
    if (back.features != d.features || back.labels != d.labels || back.classes != d.classes) std::abort();
  });
}
