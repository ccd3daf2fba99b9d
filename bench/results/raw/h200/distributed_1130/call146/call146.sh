#!/usr/bin/env bash
# Call 146 (2026-11-30, 2 x H200): 18c9a78 (destructors let their device's resources go
# through it: postings' GPU index, the pairwise engine, the edit-rate texts, the dense
# scorer): the new core GPU tests one to a process (as ctest runs them: the check that GPU
# 0's context is not made then applies), the GPU test programs, memcheck on the core GPU
# tests, then the cluster tests and bench/distributed.sh's dedup and disco.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
for t in GpuDeviceGuard.GivesTheThreadBackItsContextOrNone GpuPageLock.LetGoOnAThreadWithoutAContextLeavesItWithout \
         GpuPageLock.LockOnceLocksTheLargeSpansTheFirstTimeAndUnlocksWithTheHolder GpuPageLock.LockedMemoryCopiesUnchangedAndUnlocksOnce; do
  timeout 60 $st/bin/simkit_core_tests --gtest_filter=$t > $final/$t.log 2>&1
  echo "$t alone: exit $?, $(grep -c '^\[       OK' $final/$t.log) passed"
done
TEST_PROGRAMS="simkit_core_tests simkit_engine_tests simkit_postings_tests simkit_dedup_tests simkit_disco_tests simkit_cli_tests simkit_neighbors_tests simkit_lvq_tests" \
  STEP_TIMEOUT=100 SAN_TIMEOUT=60 SAN_TESTS="simkit_core_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDeviceGuard.*:GpuPageLock.*:GpuStagedCopy.*' \
  timeout 330 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
STEP_TIMEOUT=120 DIST_TIMEOUT=120 DIST_JOBS="dedup disco" timeout 230 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
tail -7 $final/cluster.txt
