#!/usr/bin/env bash
# Call 115 (2026-11-29, the 2-GPU kind): the session's final code on two GPUs: the cluster
# tests (--device cuda:all and mpirun -np 2 against one GPU, refusals), then the
# whole-command runs of bench/results/distributed.md for dedup (a million hashes) and disco
# (200,000 words x 10,000 features), one GPU / cuda:all / mpirun -np 2, outputs compared.
set -u
final=$1
mkdir -p $final
STEP_TIMEOUT=150 DIST_TIMEOUT=240 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final cluster 2>&1 | tail -40
