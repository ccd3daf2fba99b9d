// libFuzzer target: CTPH signatures, hashing any bytes and reading any signature text.
// The input is hashed; then read as two signatures (split at the first newline) and
// compared. A score is -1 (malformed) or 0..100, a signature compared with itself is
// -1 or 100, and every hash is a well-formed signature that matches itself.
#include <cstdlib>

#include "fuzz_common.hpp"
#include "simkit/ctph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string signature = simkit::ctph::hash({data, size});
  if (simkit::ctph::compare(signature, signature) != 100) std::abort();

  const std::string_view text = simkit::fuzz::as_text(data, size);
  const std::size_t newline = text.find('\n');
  const std::string_view a = text.substr(0, newline);
  const std::string_view b = newline == std::string_view::npos ? a : text.substr(newline + 1);
  const int score = simkit::ctph::compare(a, b);
  if (score < -1 || score > 100) std::abort();
  const int self = simkit::ctph::compare(a, a);
  if (self != -1 && self != 100) std::abort();
  return 0;
}
