// Random single-character edits (substitution, insertion, deletion), for planting near
// duplicates in tests and benchmarks. Header-only: the benchmarks use it too.
#pragma once

#include <random>
#include <string>

namespace simkit::test {

// Applies `edits` random edits to `text`; new characters come from `letter(rng)`.
template <typename Letter>
void apply_random_edits(std::string& text, int edits, std::mt19937_64& rng, const Letter& letter) {
  for (int e = 0; e < edits; ++e) {
    const int op = text.empty() ? 1 : static_cast<int>(rng() % 3);
    const std::size_t at = rng() % (text.size() + (op == 1 ? 1 : 0));  // an insertion may go at the end
    if (op == 0) text[at] = letter(rng);
    else if (op == 1) text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), letter(rng));
    else text.erase(at, 1);
  }
}

// Printable ASCII letters, as a text editor would insert.
inline char printable(std::mt19937_64& rng) { return static_cast<char>(32 + rng() % 95); }

}  // namespace simkit::test
