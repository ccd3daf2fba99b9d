#!/usr/bin/env bash
# Configures and builds simkit into build/ (CUDA when nvcc is found). Extra arguments go
# to cmake, e.g. scripts/build.sh -DSIMKIT_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build
