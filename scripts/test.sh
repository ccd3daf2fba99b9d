#!/usr/bin/env bash
# Builds simkit (CUDA code compiled when nvcc is present) and runs the whole test suite.
# GPU tests run when a GPU is present and are reported as skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMKIT_WERROR=ON
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
