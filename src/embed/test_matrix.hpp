// Internal: the randomized SVD's test matrix Omega, the same on every device: entry (c, j)
// is a hash of (seed, c, j) (splitmix64's finaliser) turned into a float uniform in
// [-1, 1) with 24 bits, exact in float32, so the CPU and the GPU start from the same sketch
// and neither has to ship it to the other.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SIMKIT_HOST_DEVICE __host__ __device__
#else
#define SIMKIT_HOST_DEVICE
#endif

namespace simkit::embed::detail {

SIMKIT_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

SIMKIT_HOST_DEVICE inline float test_entry(std::uint64_t seed, std::uint64_t c, std::uint64_t j) {
  const std::uint64_t h = mix64(mix64(seed ^ mix64(c)) + j);
  return static_cast<float>(static_cast<std::int64_t>(h >> 40) - (std::int64_t{1} << 23)) * 0x1p-23f;
}

}  // namespace simkit::embed::detail
