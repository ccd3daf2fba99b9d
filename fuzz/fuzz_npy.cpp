// libFuzzer target: an .npy matrix and its word list. The input is the .npy bytes, then
// the separator "\n--words--\n", then the list; without it the list is "a".."h".
#include <string>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const std::string_view input = simkit::fuzz::as_text(data, size);
    const std::string_view separator = "\n--words--\n";
    const std::size_t at = input.find(separator);
    const std::string_view matrix = at == std::string_view::npos ? input : input.substr(0, at);
    const std::string_view words =
        at == std::string_view::npos ? std::string_view("a\nb\nc\nd\ne\nf\ng\nh\n") : input.substr(at + separator.size());
    const auto model = simkit::neighbors::load_model_from_memory(matrix, "fuzz.npy",
                                                                  simkit::neighbors::Format::Npy, words);
    simkit::fuzz::exercise(model);
  });
}
