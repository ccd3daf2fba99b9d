#!/usr/bin/env bash
# Call 66 (2026-11-28, the 4-GPU kind): disco 200k x 10k TF32 on 1, 2 and 4 GPUs of one
# process with SIMKIT_ENGINE_STATS=1 (each GPU's phases), twice each; outputs compared.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
d=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 200000 --features 10000 --write-model $d/disco.skd > /dev/null 2>&1
for r in 1 2; do
  for n in 1 2 4; do
    vis=0; [ $n = 2 ] && vis=0,1; [ $n = 4 ] && vis=0,1,2,3
    s=$(date +%s.%N)
    CUDA_VISIBLE_DEVICES=$vis SIMKIT_ENGINE_STATS=1 $st/bin/simkit disco similar --all --model $d/disco.skd --features 10000 --k 10 \
      --precision tf32 --kernel cublas --device cuda:all --timings --quiet -o $d/out$n > $out/disco${n}_$r.log 2>&1
    echo "disco $n GPUs run $r: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}") $(grep 'all pairs of' $out/disco${n}_$r.log | sed 's/.*in \([0-9.]*\) s (\([0-9.]*\) ms.*/engine \1 s device \2 ms/')"
    [ $n = 1 ] || { cmp -s $d/out1 $d/out$n && echo "  output equal to one GPU's" || echo "  OUTPUT DIFFERS"; }
  done
done
cd $out && tar -czf logs.tar.gz *.log && rm -f *.log
