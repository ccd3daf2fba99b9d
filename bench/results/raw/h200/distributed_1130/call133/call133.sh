#!/usr/bin/env bash
# Call 133 (2026-11-30, 2 x H200): 606fb01+ (the collectives check in again once the
# receivers hold the room): the cluster tests (with the new probe test under mpirun -np 3),
# then bench/distributed.sh's dedup and disco twice.
set -u
final=$1
mkdir -p $final
STEP_TIMEOUT=200 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -14
CLUSTER_TESTS=0 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster2 cluster 2>&1 | tail -10
