#!/usr/bin/env bash
# Call 107 (2026-11-29, 1 x H200): every test program on the GPU with the session's final
# code (scripts/gpu-run.sh tests), then compute-sanitizer memcheck of the dedup GPU tests
# (quick shapes).
set -u
final=$1
mkdir -p $final
bash scripts/gpu-run.sh $final/run tests 2>&1 | tail -15
. scripts/gpu-env.sh > /dev/null
SIMKIT_TEST_QUICK=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='Gpu*' > $final/memcheck.log 2>&1
echo "memcheck simkit_dedup_tests Gpu* (quick): exit $? $(grep -E 'ERROR SUMMARY' $final/memcheck.log | tail -1)"
gzip -f $final/memcheck.log
