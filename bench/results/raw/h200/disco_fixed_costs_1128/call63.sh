#!/usr/bin/env bash
# Call 63 (2026-11-28, the 2-GPU kind): the review fixes (bd270e6): the GPU tests, memcheck,
# the cluster tests; disco 200k x 10k TF32 three ways once; the warm neighbors batch (8,192
# queries over 2,196,016 x 300, fp32 and fp16, one GPU; its answer now through the engine's
# pinned buffer kept between runs) once.
set -u
out=$1
nvidia-smi -L
n=$(mktemp -d)
tar -C $n -xJf .gpu/stage.tar.xz
tar -C $n/bin -xJf .gpu/call63_bins.tar.xz
tar -C $n -cf - . | xz -T0 -1 > .gpu/stage.tar.xz
. scripts/gpu-env.sh
for t in disco:'*' core:'Gpu*' engine:'Gpu*' neighbors:'Gpu*'; do
  name=${t%%:*}; filter=${t#*:}
  timeout 200 $st/bin/simkit_${name}_tests --gtest_filter="$filter" > $out/${name}_tests.log 2>&1
  echo "simkit_${name}_tests $filter: exit $? $(grep -c '^\[       OK' $out/${name}_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/${name}_tests.log) failed"
  grep -B2 -A8 ": Failure" $out/${name}_tests.log | head -20
done
SIMKIT_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $st/bin/simkit_engine_tests --gtest_filter='GpuPairwise*:GpuFused*' > $out/memcheck.log 2>&1
echo "memcheck GpuPairwise*, GpuFused*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1) $(grep -c '^\[       OK' $out/memcheck.log) passed"
SIMKIT_TEST_QUICK=1 timeout 100 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $st/bin/simkit_disco_tests --gtest_filter='GpuDisco.ListedColumnsGive*:GpuDisco.DenseEquals*' > $out/memcheck2.log 2>&1
echo "memcheck GpuDisco.ListedColumnsGive*, DenseEquals*: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck2.log | tail -1) $(grep -c '^\[       OK' $out/memcheck2.log) passed"
CLUSTER_BENCH=0 STEP_TIMEOUT=300 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
grep -A8 ': Failure$' $out/tests.txt | head -20
DIST_DATA=$(mktemp -d)
export DIST_DATA
for r in 1; do
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/disco$r cluster > $out/disco$r.txt 2>&1
  echo "disco$r: exit $? $(grep -P '^disco\s' $out/disco$r.txt | head -3 | awk '{print $2, $4, $5, $6}' | paste -sd ' ')"
done
rm -rf $DIST_DATA
for r in 1; do
  for v in new; do
    b=$st/bin/simkit_bench_neighbors
    CUDA_VISIBLE_DEVICES=0 timeout 200 $b --device cuda:0 --precisions fp32,fp16 --batch 8192 --check 256 --single-reps 5 --batch-reps 10 --skip-ceilings --skip-tiles --json $out/nb_${v}$r.json > $out/nb_${v}$r.txt 2> $out/nb_${v}$r.log
    echo "neighbors warm $v$r: exit $?"; grep -E "agree|batch of" $out/nb_${v}$r.log | cut -c1-200
  done
done
