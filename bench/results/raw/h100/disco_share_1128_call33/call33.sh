#!/usr/bin/env bash
# Call 33 (2026-11-28, commit e821495): the engine tests with the share tests' merge moved
# into the fixture (merged_shares): all GPU tests, memcheck of the GPU share test.
set -u
out=$1
. scripts/gpu-env.sh
t=.gpu/new_engine_tests
timeout 200 $t > $out/engine.log 2>&1
echo "simkit_engine_tests: exit $? $(grep -c '^\[       OK' $out/engine.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/engine.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/engine.log) failed"
grep -A6 ': Failure$' $out/engine.log | head -20
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $t --gtest_filter='GpuPairwise.Shares*' > $out/memcheck.log 2>&1
echo "memcheck GpuPairwise.Shares*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
