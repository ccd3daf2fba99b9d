#!/usr/bin/env bash
# Call 82 (2026-11-29, 1 x H200): the final code (call 80's after a refactor: the kernels
# share how a warp takes its next pair; the tests share their helpers): the dedup tests,
# GPU ones included, and compute-sanitizer memcheck of the verification tests.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
grep -E "^\[       OK \] GpuVerify" $out/dedup_tests.log
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests --gtest_filter='GpuVerify.*' > $out/memcheck_verify.log 2>&1
echo "memcheck GpuVerify.* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck_verify.log | tail -1)"
