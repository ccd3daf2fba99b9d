#!/usr/bin/env bash
# Call 150 (2026-11-30, 2 x H200): a review's mends to call 147's code (a cuBLAS handle's
# device asked after it is made; cca's and neighbors' scorers let their own handles go
# through their device; a pinned answer whose device the driver cannot name freed without
# making GPU 0's context; the handles test also lets go on a thread holding GPU 0). The
# context tests one to a process, every GPU test program, memcheck on the core GPU tests,
# then the cluster tests and bench/distributed.sh's dedup and disco.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
for t in GpuDeviceGuard.GivesTheThreadBackItsContextOrNone GpuPageLock.LetGoOnAThreadWithoutAContextLeavesItWithout \
         GpuHandles.LetGoOnAThreadWithoutAContextLeaveItWithout; do
  timeout 60 $st/bin/simkit_core_tests --gtest_filter=$t > $final/$t.log 2>&1
  echo "$t alone: exit $?, $(grep -c '^\[       OK' $final/$t.log) passed"
done
TEST_PROGRAMS="simkit_core_tests simkit_engine_tests simkit_postings_tests simkit_dedup_tests simkit_disco_tests simkit_cli_tests simkit_neighbors_tests simkit_lvq_tests simkit_cca_tests simkit_embed_tests" \
  STEP_TIMEOUT=100 SAN_TIMEOUT=60 SAN_TESTS="simkit_core_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDeviceGuard.*:GpuPageLock.*:GpuHandles.*:GpuStagedCopy.*' \
  timeout 300 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
STEP_TIMEOUT=120 DIST_TIMEOUT=100 DIST_JOBS="dedup disco" timeout 220 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
tail -7 $final/cluster.txt
