#!/usr/bin/env bash
# Call 61 (2026-11-28, the 2-GPU kind): disco 200k x 10k TF32 on one GPU, cuda:all and
# mpirun: now (entries page-locked whole, once a process; the engine's answer made while the
# device works and copied into it, packed, without pinned staging) twice and before (a06e3cf +
# call 56's phases) once; outputs compared; then the GPU tests of the programs changed.
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
mk now .gpu/call61_bins.tar.xz
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
keep=$(mktemp -d)
for vr in now1 before1 now2; do
  v=${vr%?}
  cp .gpu/stage_$v.tar.xz .gpu/stage.tar.xz
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/$vr cluster > $out/$vr.txt 2>&1
  echo "$vr: exit $? $(grep -P '^disco\s' $out/$vr.txt | head -3 | awk '{print $2, $4, $5, $6}' | paste -sd ' ')"
  for w in one all; do
    cp $DIST_DATA/disco_$w.out $keep/${vr}_$w.out
    tar -xzf $out/$vr/logs.tar.gz -O --wildcards "*disco_$w.log" 2>/dev/null | grep -v "of 128 \|512 x 512\|(8192)" | grep "disco\|engine" | sed "s/^/$vr $w: /" | cut -c1-250
  done
done
for w in one all; do cmp $keep/before1_$w.out $keep/now1_$w.out && echo "before1 $w == now1 $w"; done
cp .gpu/stage_now.tar.xz .gpu/stage.tar.xz
. scripts/gpu-env.sh
for t in disco:'*' core:'Gpu*' engine:'Gpu*' neighbors:'Gpu*'; do
  name=${t%%:*}; filter=${t#*:}
  timeout 200 $st/bin/simkit_${name}_tests --gtest_filter="$filter" > $out/${name}_tests.log 2>&1
  echo "simkit_${name}_tests $filter: exit $? $(grep -c '^\[       OK' $out/${name}_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/${name}_tests.log) failed"
  grep -B2 -A8 ": Failure" $out/${name}_tests.log | head -20
done
SIMKIT_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $st/bin/simkit_engine_tests --gtest_filter='GpuPairwise*:GpuFused*' > $out/memcheck.log 2>&1
echo "memcheck GpuPairwise*, GpuFused*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1) $(grep -c '^\[       OK' $out/memcheck.log) passed"
CLUSTER_BENCH=0 STEP_TIMEOUT=300 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
grep -A8 ': Failure$' $out/tests.txt | head -20
