#!/usr/bin/env bash
# Call 20 (commit b19daa3: .skv version 2, its checksum in pieces): the GPU tests of
# simkit_neighbors_tests, simkit_core_tests and the neighbors CLI tests, the whole
# cluster tests on two GPUs, then the model larger than one GPU again (a second call).
# (As it ran, its first lines were those of scripts/gpu-env.sh, which it now sources.)
set -u
out=$1
. scripts/gpu-env.sh
for t in "simkit_neighbors_tests:*" "simkit_core_tests:*" "simkit_cli_tests:*Neighbors*:*Skv*:*BadInput*"; do
  bin=${t%%:*}; filter=${t#*:}
  timeout 200 $st/bin/$bin --gtest_filter="$filter" > $out/$bin.log 2>&1
  echo "$bin: exit $? $(grep -c "^\[       OK" $out/$bin.log) passed $(grep -c "^\[  SKIPPED \] .*(" $out/$bin.log) skipped $(grep -c "^\[  FAILED  \] .*(" $out/$bin.log) failed"
  grep -A6 ': Failure$' $out/$bin.log | head -20
done
CLUSTER_BENCH=0 STEP_TIMEOUT=200 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
avail=$(df --output=avail -B1 /dev/shm | tail -1)
if (( avail > 95 * 1000 * 1000 * 1000 )); then export DIST_DATA=/dev/shm/simkit-big; else export DIST_DATA=$(mktemp -d); fi
mkdir -p "$DIST_DATA"
CLUSTER_TESTS=0 DIST_TIMEOUT=330 DIST_JOBS="big" bash scripts/gpu-run.sh $out/run cluster > $out/run.txt 2>&1
echo "big: exit $?"
grep -E "^big|big model|checksum" $out/run.txt | head -12
rm -rf "$DIST_DATA"
