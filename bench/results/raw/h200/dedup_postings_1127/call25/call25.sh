#!/usr/bin/env bash
# Call 25 (the review's fixes: the dedup index planned only where it fits, a large-answer
# GPU postings test): the GPU tests of postings and dedup, memcheck of the new test, the
# whole cluster tests.
set -u
out=$1
. scripts/gpu-env.sh
for bin in simkit_postings_tests simkit_dedup_tests; do
  timeout 200 $st/bin/$bin > $out/$bin.log 2>&1
  echo "$bin: exit $? $(grep -c "^\[       OK" $out/$bin.log) passed $(grep -c "^\[  SKIPPED \] .*(" $out/$bin.log) skipped $(grep -c "^\[  FAILED  \] .*(" $out/$bin.log) failed"
  grep -A6 ': Failure$' $out/$bin.log | head -20
done
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_postings_tests --gtest_filter="GpuPostings.*" > $out/memcheck.log 2>&1
echo "memcheck GpuPostings.*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
CLUSTER_BENCH=0 STEP_TIMEOUT=200 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
