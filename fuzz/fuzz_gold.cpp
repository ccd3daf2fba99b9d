// libFuzzer target: word-similarity gold standards (simkit disco evaluate, simkit neighbors evaluate). Bad text must
// end in InputError; an accepted file has pairs of non-empty words with finite scores,
// and Spearman's rho of its scores with themselves is 1 or 0 (all equal).
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz_common.hpp"
#include "simkit/wordsim.hpp"
#include "simkit/io.hpp"

namespace wordsim = simkit::wordsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const simkit::fuzz::ScratchFile file("gold");
  simkit::write_file_atomically(file.path, simkit::fuzz::as_text(data, size));
  return simkit::fuzz::guarded([&] {
    const auto pairs = wordsim::read_gold(file.path);
    std::vector<double> scores;
    for (const auto& p : pairs) {
      if (p.a.empty() || p.b.empty() || !std::isfinite(p.score)) std::abort();
      scores.push_back(p.score);
    }
    const double rho = wordsim::spearman(scores, scores);
    if (!(std::abs(rho - 1) < 1e-9 || rho == 0)) std::abort();
  });
}
