#include "core/blas_kernel.hpp"

#include <cblas.h>

#include <mutex>
#include <cpuid.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace simkit {

namespace {
bool has_avx512_for_skylakex() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  const bool f = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
  // The OS must save the AVX-512 state (XCR0 bits 5-7) for the instructions to work.
  __cpuid(1, a, b, c, d);
  if (!(c & (1u << 27))) return false;  // OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return f && dq && bw && vl && (lo & 0xE6) == 0xE6;
}
}  // namespace

const char* better_blas_coretype() noexcept {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return nullptr;
  const char* core = openblas_get_corename();
  if (core == nullptr) return nullptr;
  const bool avx2_kernel = std::strcmp(core, "Haswell") == 0 || std::strcmp(core, "Zen") == 0;
  return avx2_kernel && has_avx512_for_skylakex() ? "SkylakeX" : nullptr;
}

void restart_with_better_blas(char** argv) noexcept {
  if (const char* core = better_blas_coretype()) {
    ::setenv("OPENBLAS_CORETYPE", core, 1);
    ::execv("/proc/self/exe", argv);
  }
}

void use_single_threaded_blas() noexcept {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

}  // namespace simkit
