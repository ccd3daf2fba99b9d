#!/usr/bin/env bash
# Call 148 (2026-11-30, 2 x H200): the code of call 147: the cluster tests (cuda:all and
# mpirun -np 2 against one GPU; OpenMPI set up by gpu-env.sh's stage_mpi) and
# bench/distributed.sh's dedup and disco, twice.
set -u
final=$1
mkdir -p $final
STEP_TIMEOUT=150 DIST_TIMEOUT=120 DIST_JOBS="dedup disco" timeout 330 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
tail -8 $final/cluster.txt
CLUSTER_TESTS=0 DIST_TIMEOUT=120 DIST_JOBS="dedup disco" timeout 200 bash scripts/gpu-run.sh $final/cluster2 cluster > $final/cluster2.txt 2>&1
tail -6 $final/cluster2.txt
