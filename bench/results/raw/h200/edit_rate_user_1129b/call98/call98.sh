#!/usr/bin/env bash
# Call 98 (2026-11-29, 1 x H200): the session's final code (6023c3b: + the signatures scored in
# sets of at most 1 GiB, each group's once) against the code
# before the session (c88/, 4420ecb). The dedup tests; the pipeline at 20,000
# documents (final four times, before twice, alternated); whole edit-rate commands on the
# GPU (three runs each, alternated) and on the 16 cores (one each); outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c88.tar.xz
for t in dedup; do
  timeout 200 $st/bin/simkit_${t}_tests > $out/${t}_tests.log 2>&1
  echo "simkit_${t}_tests: exit $? $(grep -c '^\[       OK' $out/${t}_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/${t}_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/${t}_tests.log) failed"
  grep -A6 ': Failure$' $out/${t}_tests.log | head -20
done
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
show() { echo "bench $1: $(grep 'bench: edit rate' $out/bench_$1.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*\|"gpu_kernel_ms":[0-9.]*' | tr '\n' ' ')"; }
for r in 1 2 3 4; do
  timeout 100 $st/bin/simkit_bench_dedup $b > $out/bench_final_$r.log 2>&1; show final_$r
  if [ $r -le 2 ]; then timeout 100 .gpu/c88/simkit_bench_dedup $b > $out/bench_c88_$r.log 2>&1; show c88_$r; fi
done
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-600)"
}
for r in 1 2 3; do
  run c88_cuda_$r .gpu/c88/simkit cuda
  run final_cuda_$r $st/bin/simkit cuda
done
run c88_cpu .gpu/c88/simkit cpu
run final_cpu $st/bin/simkit cpu
for f in final_cuda_1 c88_cuda_2 final_cuda_2 c88_cuda_3 final_cuda_3 c88_cpu final_cpu; do
  cmp -s "$data/c88_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
tar -C $out -czf $final/logs.tgz .
