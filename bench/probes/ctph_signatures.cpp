// Probe: one core's rate of the edit-rate pipeline's signatures (ctph::
// rate_and_length_signatures, both signatures from one pass over each document), over
// every file under a folder read into memory first; three timed passes. No GPU needed.
//   g++ -std=c++20 -O3 -Iinclude bench/probes/ctph_signatures.cpp build/src/libsimkit.a -ltbb -lfmt \
//       -o signatures_probe
//   ./signatures_probe /usr/include/boost [length]   (bench/results/dedup.md; length: 100)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "simkit/ctph.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FOLDER [LENGTH]\n", argv[0]);
    return 2;
  }
  const std::size_t length = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100;
  std::vector<std::vector<unsigned char>> documents;
  std::size_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(argv[1])) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    documents.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    bytes += documents.back().size();
  }
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    std::size_t characters = 0;  // (used, so that no pass is optimised away)
    for (const auto& d : documents) {
      const auto [rate, by_length] = simkit::ctph::rate_and_length_signatures(d, length, length);
      characters += rate.text.size() + by_length.text.size();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%zu documents, %.1f MB: %.3f s on one core, %.1f MB/s (%zu signature characters)\n",
                documents.size(), static_cast<double>(bytes) / 1e6, s, static_cast<double>(bytes) / 1e6 / s, characters);
  }
}
