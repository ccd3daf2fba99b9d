#!/usr/bin/env bash
# Call 41 (2026-11-28, 1 x H100, 16 cores): whole `simkit dedup --mode edit-rate` commands on
# 20,000 documents (Boost headers and edited copies, made by simkit_bench_dedup) with the
# final code (final: the signature pairs pruned by length) against call 37's binary (new:
# the signatures vectorised, every pair scored), alternated twice on the GPU, once each on
# the CPU (16 cores); outputs compared.
set -u
out=$1
. scripts/gpu-env.sh
data=$(mktemp -d)
tar -C .gpu -xJf .gpu/call37_bins.tar.xz
tar -C .gpu -xJf .gpu/call41_bins.tar.xz
tar -C "$data" -xJf .gpu/boost.tar.xz
.gpu/new_bench_dedup --device cuda --docs "$data/boost" --sizes 20000 --scratch "$data/copies" --no-cpu-pipeline --reps 1 --kernel-strings 100 > /dev/null 2>&1
echo "documents: $(find $data/boost $data/copies -type f | wc -l)"
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-420)"
}
for r in 1 2; do run before_cuda_$r .gpu/new_simkit cuda; run final_cuda_$r .gpu/final_simkit cuda; done
run before_cpu .gpu/new_simkit cpu
run final_cpu .gpu/final_simkit cpu
for f in final_cuda_1 before_cuda_2 final_cuda_2 before_cpu final_cpu; do cmp -s "$data/before_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"; done
