#!/usr/bin/env bash
# Call 26 (2026-11-28): disco's words dealt to the workers in ranges of 4,096 back and forth
# (share_blocks): the GPU tests of the engine and disco, the whole cluster tests, then the
# 200,000-word disco command on one GPU, cuda:all and mpirun -np 2, twice.
set -u
out=$1
. scripts/gpu-env.sh
for t in simkit_engine_tests simkit_disco_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep -A6 ': Failure$' $out/$t.log | head -20
done
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS="disco" bash scripts/gpu-run.sh $out/run1 cluster > $out/run1.txt 2>&1
echo "run 1: exit $?"; grep -E "simkit_cluster_tests:" $out/run1.txt | head -1
grep -P "^disco\t" $out/run1/distributed/distributed.tsv 2>/dev/null || tail -n 20 $out/run1.txt
grep -h "engine:" $out/run1/distributed/disco_*.log 2>/dev/null | sed 's/^/run1 /' | head -8
CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS="disco" bash scripts/gpu-run.sh $out/run2 cluster > $out/run2.txt 2>&1
echo "run 2: exit $?"
grep -P "^disco\t" $out/run2/distributed/distributed.tsv 2>/dev/null || tail -n 20 $out/run2.txt
grep -h "engine:" $out/run2/distributed/disco_*.log 2>/dev/null | sed 's/^/run2 /' | head -8
