#!/usr/bin/env bash
# Call 147 (2026-11-30, 2 x H200): every CUDA handle (device and pinned memory, streams,
# events, cuBLAS handles, pinned answers) lets go through the device it was made on
# (QuietDeviceGuard); scripts/gpu-env.sh's stage_programs and stage_mpi shared with
# gpu-run.sh. The context tests one to a process (as ctest runs them: on two GPUs they also
# check that GPU 0's context is not made), every GPU test program, memcheck on the core GPU
# tests.
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
  timeout 420 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
