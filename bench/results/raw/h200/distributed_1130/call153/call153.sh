#!/usr/bin/env bash
# Call 153 (2026-11-30, 2 x H200): every cuBLAS handle simkit makes is a cuda::CublasHandle
# (lvq's predict, the GEMM study, cca's and neighbors' scorers), and the context tests share
# one watch of GPU 0's context. The context tests one to a process, the GPU test programs
# of core, engine, neighbors, lvq and cca, the GEMM study once (its cuBLAS rows), and the
# lvq and cca commands on cuda:1 alone.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
for t in GpuDeviceGuard.GivesTheThreadBackItsContextOrNone GpuPageLock.LetGoOnAThreadWithoutAContextLeavesItWithout \
         GpuHandles.LetGoOnAThreadWithoutAContextLeaveItWithout; do
  timeout 60 $st/bin/simkit_core_tests --gtest_filter=$t > $final/$t.log 2>&1
  echo "$t alone: exit $?, $(grep -c '^\[       OK' $final/$t.log) passed"
done
TEST_PROGRAMS="simkit_core_tests simkit_engine_tests simkit_neighbors_tests simkit_lvq_tests simkit_cca_tests simkit_cli_tests" \
  STEP_TIMEOUT=100 SAN_TIMEOUT=90 SAN_TESTS="simkit_core_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDeviceGuard.*:GpuPageLock.*:GpuHandles.*:GpuStagedCopy.*' \
  timeout 360 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
timeout 60 $st/bin/simkit bench gemm --sizes 512 --reps 2 > $final/gemm.txt 2>&1
echo "bench gemm: exit $?, $(grep -c cuBLAS $final/gemm.txt) cuBLAS rows"
