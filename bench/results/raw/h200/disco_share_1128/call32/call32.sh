#!/usr/bin/env bash
# Call 32 (2026-11-28): the review's fixes (a worker left without a share scores nothing;
# the engine with an empty share never loads a block): the GPU tests of the engine and
# disco, memcheck of the new GPU share test, the whole cluster tests, one disco run.
set -u
out=$1
. scripts/gpu-env.sh
for t in simkit_engine_tests simkit_disco_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep -A6 ': Failure$' $out/$t.log | head -20
done
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_engine_tests --gtest_filter='GpuPairwise.Shares*' > $out/memcheck.log 2>&1
echo "memcheck GpuPairwise.Shares*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d) DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS="disco" bash scripts/gpu-run.sh $out/run cluster > $out/run.txt 2>&1
echo "cluster tests and one disco run: exit $?"; grep -E "simkit_cluster_tests:" $out/run.txt | head -1
grep -P "^disco\t" $out/run.txt
tar -xzf $out/run/logs.tar.gz -O --wildcards '*disco_*.log' 2>/dev/null | grep -E "engine: (6|12)|s \(" | cut -c1-140
