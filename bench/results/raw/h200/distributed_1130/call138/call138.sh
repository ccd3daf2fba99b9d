#!/usr/bin/env bash
# Call 138 (2026-11-30, 2 x H200): f8fbc50, the final code of the twenty-sixth session:
# the cluster tests, then bench/distributed.sh's dedup and disco twice.
set -u
final=$1
mkdir -p $final
STEP_TIMEOUT=150 DIST_TIMEOUT=150 DIST_JOBS="dedup disco" timeout 330 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
CLUSTER_TESTS=0 DIST_TIMEOUT=120 DIST_JOBS="dedup disco" timeout 130 bash scripts/gpu-run.sh $final/cluster2 cluster > $final/cluster2.txt 2>&1
tail -12 $final/cluster.txt; tail -8 $final/cluster2.txt
