#!/usr/bin/env bash
# Call 53 (2026-11-28, 1 x H100): the final code's disco tests (the listed-columns test now
# also checks the columns kept and listed under a budget of small tiles) and
# compute-sanitizer memcheck of the GPU disco tests that run the lists.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call53_bins.tar.xz
timeout 300 .gpu/xp_simkit_disco_tests > $out/disco_tests.log 2>&1
echo "simkit_disco_tests: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/disco_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
grep -B3 -A12 ": Failure" $out/disco_tests.log | head -40
SIMKIT_TEST_QUICK=1 timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/xp_simkit_disco_tests --gtest_filter='GpuDisco.ListedColumns*:GpuDisco.SparseEquals*:GpuDisco.DenseEquals*' > $out/memcheck.log 2>&1
echo "memcheck ListedColumns, SparseEquals, DenseEquals: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
grep -c '^\[       OK' $out/memcheck.log
