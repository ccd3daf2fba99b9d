#!/usr/bin/env bash
# Call 56 (2026-11-28, the 2-GPU kind): the disco tests after call 54's two test fixes,
# memcheck of the listed-column tests; then disco 200k x 10k TF32 on one GPU, cuda:all
# and mpirun with every phase printed (SIMKIT_ENGINE_STATS=1), to find what does not divide.
set -u
out=$1
nvidia-smi -L
n=$(mktemp -d)
tar -C $n -xJf .gpu/stage.tar.xz
tar -C $n/bin -xJf .gpu/call56_bins.tar.xz
tar -C $n -cf - . | xz -T0 -1 > .gpu/stage.tar.xz
. scripts/gpu-env.sh
timeout 150 $st/bin/simkit_disco_tests > $out/disco_tests.log 2>&1
echo "simkit_disco_tests: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/disco_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
grep -B2 -A10 ": Failure" $out/disco_tests.log | head -30
SIMKIT_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_disco_tests --gtest_filter='GpuDisco.ListedColumnsGive*:GpuDisco.SparseEquals*' > $out/memcheck.log 2>&1
echo "memcheck ListedColumnsGive, SparseEquals: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1) $(grep -c '^\[       OK' $out/memcheck.log) passed"
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
command -v nsys && echo nsys here
for r in 1 2; do
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/now$r cluster > $out/now$r.txt 2>&1
  echo "now$r: exit $?"; grep -P "^disco\s" $out/now$r.txt
  for w in one all mpi; do
    echo "--- $w"
    tar -xzf $out/now$r/logs.tar.gz -O --wildcards "*disco_$w.log" 2>/dev/null | grep -v "of 128 \|512 words\|^disco: all pairs of 8192" | grep "disco\|engine\|timing" | cut -c1-260
  done
done
