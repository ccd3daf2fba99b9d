// libFuzzer target: simkit's LVQ model (.skq) reader (simkit lvq predict). The checksum is
// not checked in fuzzing builds, so the structure checks behind it are reached; an
// accepted model must classify a few samples into its classes and write and read back
// the same.
#include <cstdlib>

#include "fuzz_common.hpp"
#include "simkit/lvq.hpp"

namespace lvq = simkit::lvq;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const lvq::Model model = lvq::parse_model(simkit::fuzz::as_text(data, size), "fuzz");
    if (model.count() * model.dims > 100000) return;
    lvq::Dataset samples;
    samples.rows = 3;
    samples.dims = model.dims;
    samples.features.assign(3 * model.dims, 0.5f);
    for (const std::uint32_t c : lvq::predict(model, samples, 2))
      if (c >= model.classes.size()) std::abort();
    const simkit::fuzz::ScratchFile file("m.skq");
    lvq::write_model(model, file.path);
    const lvq::Model back = lvq::read_model(file.path);
    if (back.prototypes != model.prototypes || back.classes != model.classes || back.mean != model.mean ||
        back.scale != model.scale || back.per_class != model.per_class)
      std::abort();
  });
}
