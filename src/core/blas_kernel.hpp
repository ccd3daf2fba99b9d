// OpenBLAS picks its CPU kernels when it loads. Debian 12's OpenBLAS (0.3.21) takes
// recent AMD processors with AVX-512 for Haswell and uses AVX2 kernels at half speed;
// this detects that case so the program can restart itself with OPENBLAS_CORETYPE set.
#pragma once

namespace simkit {

// The OpenBLAS core type this process should ask for, or nullptr when OpenBLAS's own
// choice is right (or the user already set OPENBLAS_CORETYPE).
const char* better_blas_coretype() noexcept;

// For a program's main(): when better_blas_coretype() names one, sets OPENBLAS_CORETYPE
// and executes the program again with the same arguments (once: the variable is then
// set). Returns only when no restart is needed or it failed.
void restart_with_better_blas(char** argv) noexcept;

// For callers that run BLAS inside the pairwise engine's threads: each call then stays
// on its thread (OpenBLAS's own threads would oversubscribe the cores). Once a process.
void use_single_threaded_blas() noexcept;

}  // namespace simkit
