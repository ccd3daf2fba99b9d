#!/usr/bin/env bash
# Call 31 (2026-11-28): the final code of the disco share change with the tests' fix (the
# programs the tests run no longer print phase lines that the caller's environment asks
# for): the GPU tests of the engine and disco, the whole cluster tests, then the
# 200,000-word disco command on one GPU, cuda:all and mpirun -np 2, twice (engine lines on).
set -u
out=$1
. scripts/gpu-env.sh
for t in simkit_engine_tests simkit_disco_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep -A6 ': Failure$' $out/$t.log | head -20
done
SIMKIT_ENGINE_STATS=1 CLUSTER_BENCH=0 STEP_TIMEOUT=200 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests (SIMKIT_ENGINE_STATS=1 set by the caller): exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
for r in 1 2; do
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS="disco" bash scripts/gpu-run.sh $out/run$r cluster > $out/run$r.txt 2>&1
  echo "run $r: exit $?"
  grep -P "^disco\t" $out/run$r/distributed/distributed.tsv 2>/dev/null || tail -n 20 $out/run$r.txt
  tar -xzf $out/run$r/logs.tar.gz -O --wildcards '*disco_*.log' 2>/dev/null | grep -E "engine: (6|12)|s \(" | cut -c1-140 | sed "s/^/run$r /"
done
