#!/usr/bin/env bash
# Call 70 (2026-11-28, the 2-GPU kind): the GPUs a --device names, the others hidden from
# the driver, now checked against the driver's start (cuDeviceGetCount before cuInit) and
# not against its library's load (cuBLAS loads libcuda as the process starts: call 69).
# ClusterGpu.* (the cluster tests on two GPUs), then one-GPU whole commands (--device
# cuda:0) of the code before (a5a4b4f), before with CUDA_VISIBLE_DEVICES=0 set outside,
# and now, alternated three times: disco 200k x 10k TF32; neighbors 8,192 queries over
# 2,196,016 x 300 fp32.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C $st/bin -xJf .gpu/before.tar.xz
export PATH=$st/bin:$PATH
if [ "${SKIP_CLUSTER_TESTS:-0}" != 1 ]; then  # (call 72: the timings alone)
  CLUSTER_BENCH=0 STEP_TIMEOUT=300 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
  echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
  grep -A8 ': Failure$' $out/tests.txt | head -20
fi
d=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 200000 --features 10000 --write-model $d/disco.skd > /dev/null 2>&1
$st/bin/simkit_bench_neighbors --write-model $d/glove.skv --check 8192 2> /dev/null > /dev/null
t() { local s=$(date +%s.%N); "$@" > /dev/null 2> $d/log; echo "exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}")"; }
for r in 1 2 3; do
  for v in before outside now; do
    pre=(); b=simkit
    [ $v = before ] && b=simkit_before
    [ $v = outside ] && { b=simkit_before; pre=(env CUDA_VISIBLE_DEVICES=0); }
    echo "disco one GPU $v $r: $(t "${pre[@]}" $b disco similar --all --model $d/disco.skd --features 10000 --k 10 --precision tf32 --kernel cublas --device cuda:0 --timings --quiet -o $d/disco_$v) | $(grep -E 'waited' $d/log | sed 's/simkit: timing: //g')"
    echo "neighbors one GPU $v $r: $(t "${pre[@]}" $b neighbors --model $d/glove.skv --batch 8192 --format tsv --device cuda:0 --timings --quiet -o $d/nb_$v < $d/glove.skv.queries) | $(grep -E 'quer' $d/log | sed 's/simkit: timing: //g' | cut -c1-120)"
  done
  cmp -s $d/disco_before $d/disco_now && cmp -s $d/nb_before $d/nb_now && cmp -s $d/nb_before $d/nb_outside && echo "outputs equal" || echo "OUTPUTS DIFFER"
done
