// libFuzzer target: simkit's DISCO model (.skd) reader (simkit disco similar/compare). The
// checksum is not checked in fuzzing builds, so the structure checks behind it are
// reached; an accepted model (Lin or PPMI) must write and read back the same, and its
// similarities must lie in [0, 1] with every word wholly like itself or featureless.
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz_common.hpp"
#include "simkit/disco.hpp"

namespace disco = simkit::disco;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const disco::Model model = disco::parse_model(simkit::fuzz::as_text(data, size), "fuzz");
    for (std::size_t a = 0; a < model.size() && a < 16; ++a)
      for (std::size_t b = 0; b < model.size() && b < 16; ++b) {
        const double s = disco::similarity(model, a, b);
        if (!(s >= 0 && s <= 1 + 1e-6)) std::abort();
        if (a == b && model.mi_sums[a] > 0 && std::abs(s - 1) > 1e-6) std::abort();
      }
    if (model.features.size() > 100000) return;
    const simkit::fuzz::ScratchFile file("skd");
    disco::write_model(model, file.path);
    const disco::Model back = disco::read_model(file.path);
    if (back.words != model.words || back.features != model.features || back.mi != model.mi ||
        back.counts != model.counts || back.window != model.window || back.keep_case != model.keep_case ||
        back.measure != model.measure || back.ppmi.alpha != model.ppmi.alpha || back.ppmi.shift != model.ppmi.shift ||
        back.ppmi.weighted != model.ppmi.weighted || back.subsample != model.subsample)
      std::abort();
  });
}
