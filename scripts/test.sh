#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run):
#   1. the normal build (CUDA code compiled when nvcc is present), -Werror, all tests (the
#      Python package's pytest files and the install of the library with examples/cpp built
#      against it included); GPU tests run when a GPU is present and are reported as skipped
#      otherwise;
#   2. the same tests in a CPU-only ASan + UBSan build (halt on the first report);
#   3. every libFuzzer target for FUZZ_SECONDS each (default 30) from its seed corpus.
# SIMKIT_TEST_STAGES=normal,sanitize,fuzz picks stages (default: all three).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)
stages=",${SIMKIT_TEST_STAGES:-normal,sanitize,fuzz},"
stage() { echo; echo "=== test.sh: $* ($(date +%T))"; }

if [[ $stages == *,normal,* ]]; then
  stage "normal build and tests"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMKIT_WERROR=ON
  cmake --build build -j "$jobs"
  ctest --test-dir build --output-on-failure -j "$jobs"
fi

if [[ $stages == *,sanitize,* ]]; then
  stage "ASan + UBSan build and tests"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMKIT_CUDA=OFF \
    -DSIMKIT_SANITIZE=address,undefined -DSIMKIT_BENCH=OFF -DSIMKIT_WERROR=ON
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi

if [[ $stages == *,fuzz,* ]]; then
  stage "fuzz targets, ${FUZZ_SECONDS:-30} s each"
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
fi
stage "all stages passed"
