// libFuzzer target: the query expression parser and the query direction.
#include "fuzz_common.hpp"

namespace {
const simkit::neighbors::Model& model() {
  static const simkit::neighbors::Model m = simkit::neighbors::make_model(
      {"king", "man", "woman", "queen", "e-mail", "c++", "-", "+x", "zero"},
      {1, 0, 0, 0, 2, 0, 0, 0, 3, 1, 1, 1, 1, 2, 3, 3, 2, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0}, 3);
  return m;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const auto query = simkit::neighbors::parse_query(simkit::fuzz::as_text(data, size), model(), "fuzz");
    if (query.terms.empty()) std::abort();
    const auto direction = simkit::neighbors::query_vector(model(), query, "fuzz");
    double length = 0;
    for (float x : direction) length += static_cast<double>(x) * x;
    if (std::fabs(length - 1.0) > 1e-4) std::abort();
  });
}
