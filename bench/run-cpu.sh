#!/usr/bin/env bash
# CPU side of the neighbors benchmark, on this machine: simkit's CPU path and FAISS
# IndexFlatIP (the peer) in the same run, over 2,196,016 x 300 unit vectors, under the
# OpenBLAS kernels the environment selects and again with OPENBLAS_CORETYPE=SkylakeX for
# both (Debian 12's OpenBLAS takes some AVX-512 processors for Haswell).
# Usage: bench/run-cpu.sh OUTDIR   (needs build/ and scripts/setup.sh --bench)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results/raw}
mkdir -p "$out"
bench=build/bench/simkit_bench_neighbors
omp=/usr/lib/x86_64-linux-gnu/openblas-openmp
for core in env SkylakeX; do
  if [ "$core" = env ]; then set_core=(); else set_core=(env OPENBLAS_CORETYPE=$core); fi
  "${set_core[@]}" "$bench" --device cpu --single-reps 10 --batch-reps 3 --json "$out/neighbors_cpu_$core.json" 2>&1 | tail -n 1
  "${set_core[@]}" env LD_LIBRARY_PATH=$omp /usr/bin/python3 bench/peers/faiss_neighbors.py \
    --json "$out/neighbors_faiss_$core.json" 2>&1 | tail -n 1
done
