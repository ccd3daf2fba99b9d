// libFuzzer target: the skv model reader (simkit neighbors --model).
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const auto model = simkit::neighbors::load_model_from_memory(simkit::fuzz::as_text(data, size), "fuzz",
                                                                  simkit::neighbors::Format::Skv);
    simkit::fuzz::exercise(model);
  });
}
