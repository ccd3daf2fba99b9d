#!/usr/bin/env bash
# Call 55 (2026-11-28, 1 x H100): the disco tests after call 54's two test fixes (the sparse
# form's small budget leaves room for its lists as they are made; the listed-columns test's
# small tiles from SIMKIT_GPU_TILE_MB), then memcheck of the listed-column tests if time allows.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call55_bins.tar.xz
timeout 120 .gpu/xp_simkit_disco_tests > $out/disco_tests.log 2>&1
echo "simkit_disco_tests: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/disco_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
grep -B2 -A10 ": Failure" $out/disco_tests.log | head -30
SIMKIT_TEST_QUICK=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/xp_simkit_disco_tests --gtest_filter='GpuDisco.ListedColumnsGive*:GpuDisco.SparseEquals*' > $out/memcheck.log 2>&1
echo "memcheck ListedColumnsGive, SparseEquals: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1) $(grep -c '^\[       OK' $out/memcheck.log) passed"
