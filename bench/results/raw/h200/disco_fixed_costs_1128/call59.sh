#!/usr/bin/env bash
# Call 59 (2026-11-28, the 2-GPU kind): disco 200k x 10k TF32 on one GPU, cuda:all and
# mpirun, before (a06e3cf with call 56's printed phases) and now (the entries page-locked
# once a process in pieces locked on all cores, the host rows freed beside the writing, the
# lists moved not copied and made while the device works), alternating, twice; outputs of
# before and now compared; then the disco, core and cluster GPU tests.
set -u
out=$1
nvidia-smi -L
base=$(mktemp -d)
tar -C $base -xJf .gpu/stage.tar.xz
mk() {  # mk NAME BINS: a stage of the base with these programs
  local n=$(mktemp -d)
  cp -r $base/. $n/
  tar -C $n/bin -xJf $2
  tar -C $n -cf - . | xz -T0 -1 > .gpu/stage_$1.tar.xz
}
mk before .gpu/call56s_bins.tar.xz
mk now .gpu/call59_bins.tar.xz
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
keep=$(mktemp -d)
for r in 1 2; do
  for v in before now; do
    cp .gpu/stage_$v.tar.xz .gpu/stage.tar.xz
    CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/$v$r cluster > $out/$v$r.txt 2>&1
    echo "$v$r: exit $?"; grep -P "^disco\s" $out/$v$r.txt | head -3
    for w in one all; do
      cp $DIST_DATA/disco_$w.out $keep/${v}${r}_$w.out 2>/dev/null
      tar -xzf $out/$v$r/logs.tar.gz -O --wildcards "*disco_$w.log" 2>/dev/null | grep -v "of 128 \|512 x 512\|(8192)" | grep "rows on the GPU:\|engine:\|disco engine\|timing: all pairs\|written\|workers\|merged" | sed "s/^/$v$r $w: /" | cut -c1-250
    done
  done
done
for w in one all; do cmp $keep/before1_$w.out $keep/now1_$w.out && echo "before1 $w == now1 $w"; done
cp .gpu/stage_now.tar.xz .gpu/stage.tar.xz
. scripts/gpu-env.sh
timeout 150 $st/bin/simkit_disco_tests > $out/disco_tests.log 2>&1
echo "simkit_disco_tests: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
timeout 100 $st/bin/simkit_core_tests --gtest_filter='Gpu*' > $out/core_tests.log 2>&1
echo "simkit_core_tests Gpu*: exit $? $(grep -c '^\[       OK' $out/core_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/core_tests.log) failed"
grep -B2 -A8 ": Failure" $out/disco_tests.log $out/core_tests.log | head -30
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $st/bin/simkit_core_tests --gtest_filter='GpuPageLock*' > $out/memcheck.log 2>&1
echo "memcheck GpuPageLock: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
CLUSTER_BENCH=0 STEP_TIMEOUT=300 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
grep -A8 ': Failure$' $out/tests.txt | head -20
