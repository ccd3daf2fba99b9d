#!/usr/bin/env bash
# Call 64 (2026-11-28, the 4-GPU kind): the disco warm-up that loads the lists' kernels
# (GPU disco tests; 100k x 10k TF32 whole command, the code before (a5a4b4f) and now
# alternated, GPU 0); the cluster tests on every GPU (cuda:all and mpirun -np GPUs).
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
nproc
tar -C $st/bin -xJf .gpu/before.tar.xz   # simkit_before
export PATH=$st/bin:$PATH
timeout 200 $st/bin/simkit_disco_tests --gtest_filter='GpuDisco*' > $out/disco_tests.log 2>&1
echo "simkit_disco_tests GpuDisco*: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
grep -B2 -A8 ": Failure" $out/disco_tests.log | head -20
d=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 100000 --features 10000 --write-model $d/disco.skd > /dev/null 2>&1
for r in 1 2 3; do
  for v in before now; do
    b=$st/bin/simkit; [ $v = before ] && b=$st/bin/simkit_before
    s=$(date +%s.%N)
    CUDA_VISIBLE_DEVICES=0 SIMKIT_ENGINE_STATS=1 $b disco similar --all --model $d/disco.skd --features 10000 --k 10 \
      --precision tf32 --kernel cublas --device cuda --timings --quiet -o $d/$v.out > $out/warm_${v}_$r.log 2>&1
    st_=$?
    w=$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}")
    echo "disco 100k $v $r: exit $st_ wall $w s | $(grep -E 'rows on the GPU' $out/warm_${v}_$r.log | head -1 | cut -c1-200) | $(grep -E 'all pairs in|waited' $out/warm_${v}_$r.log | tr '\n' ' ' | cut -c1-300)"
  done
  cmp -s $d/before.out $d/now.out && echo "outputs equal" || echo "OUTPUTS DIFFER"
done
rm -rf $d
CLUSTER_BENCH=0 STEP_TIMEOUT=330 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
grep -A8 ': Failure$' $out/tests.txt | head -20
