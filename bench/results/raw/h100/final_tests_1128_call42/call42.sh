#!/usr/bin/env bash
# Call 42 (2026-11-28, 1 x H100): the final code's test programs after the review's fixes
# (postings: a reused Results falls back to the heap when memory cannot be page-locked, no
# free while a copy lands; dedup: the pruning's runs of a few rows on the GPU, the count of
# signature pairs scored), GPU tests included; compute-sanitizer memcheck of the postings
# GPU tests and of the GPU edit-rate test.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call42_tests.tar.xz
export LD_LIBRARY_PATH=$PWD/.gpu:$LD_LIBRARY_PATH
for t in simkit_dedup_tests simkit_postings_tests simkit_core_tests; do
  timeout 400 .gpu/final_$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep "^\[  FAILED" $out/$t.log | head -5
done
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/final_simkit_postings_tests --gtest_filter='GpuPostings.*' > $out/memcheck_postings.log 2>&1
echo "memcheck GpuPostings.*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck_postings.log | tail -1)"
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/final_simkit_dedup_tests --gtest_filter='GpuDedup.EditRate*' > $out/memcheck_dedup.log 2>&1
echo "memcheck GpuDedup.EditRate*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck_dedup.log | tail -1)"
