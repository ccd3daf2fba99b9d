#!/usr/bin/env bash
# Call 93 (2026-11-29, 1 x H200): cuBLAS, cuSOLVER and cuSPARSE loaded on first use (the
# final build) against the code before (c88/). Every test program (scripts/gpu-run.sh
# tests: the GPU tests of every module go through the forwarders); the process's start
# (simkit --version, five runs each, alternated) and the whole edit-rate command at 20,000
# documents (three runs each, alternated); a GPU search on the sample model (cuBLAS
# loaded by it).
set -u
final=$1
mkdir -p $final
bash scripts/gpu-run.sh $final/run tests 2>&1 | tail -15
out=$(mktemp -d)
. scripts/gpu-env.sh > /dev/null
tar -C .gpu -xJf .gpu/c88.tar.xz
for w in c88 final; do
  bin=$([ $w = c88 ] && echo .gpu/c88/simkit || echo $st/bin/simkit)
  echo "$w --version: $(for i in 1 2 3 4 5; do /usr/bin/time -f %e $bin --version 2>&1 >/dev/null; done | tr '\n' ' ')"
  LD_DEBUG=libs $bin --version 2>&1 | grep -c "find library=libcublas" | sed "s/^/$w: libcublas looked for at --version: /"
done
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
timeout 100 $st/bin/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 1 > $out/bench.log 2>&1
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-520)"
}
for r in 1 2 3; do
  run c88_cuda_$r .gpu/c88/simkit cuda
  run final_cuda_$r $st/bin/simkit cuda
done
for f in final_cuda_1 c88_cuda_2 final_cuda_2 c88_cuda_3 final_cuda_3; do
  cmp -s "$data/c88_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
for w in c88 final; do
  bin=$([ $w = c88 ] && echo .gpu/c88/simkit || echo $st/bin/simkit)
  start=$(date +%s.%N)
  $bin neighbors --model data/samples/vectors.vec --device cuda --timings king "king - man + woman" > $out/nb_$w.txt 2> $out/nb_$w.log
  echo "neighbors $w: exit $? $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s; $(grep -h timing $out/nb_$w.log | tr '\n' '|' | cut -c1-300)"
done
cmp -s $out/nb_c88.txt $out/nb_final.txt && echo "neighbors outputs equal" || echo "neighbors outputs DIFFER"
tar -C $out -czf $final/logs.tgz .
