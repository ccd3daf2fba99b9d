#!/usr/bin/env bash
# Call 85 (2026-11-29, 1 x H200): each worker's two candidate filters (the thesis's and the
# guarantee's) at once, a thread and a stream each. Before: call 84's new build (c84/, commit
# a4f78c7). Also the wide verification kernel on a sixth and a quarter of the
# multiprocessors instead of an eighth (XP_WIDE_DIV, an experiment's knob in xp85/, built
# from this code). The dedup tests; the pipeline at 20,000 documents, before / new /
# wide 6 / wide 4 alternated twice; whole commands before and new alternated three times;
# outputs compared.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp85.tar.xz
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
for r in 1 2; do
  timeout 100 .gpu/c84/simkit_bench_dedup $b > $out/bench_before_$r.log 2>&1
  timeout 100 $st/bin/simkit_bench_dedup $b > $out/bench_new_$r.log 2>&1
  XP_WIDE_DIV=6 timeout 100 .gpu/xp85/xp_bench_dedup $b > $out/bench_wide6_$r.log 2>&1
  XP_WIDE_DIV=4 timeout 100 .gpu/xp85/xp_bench_dedup $b > $out/bench_wide4_$r.log 2>&1
  for w in before new wide6 wide4; do
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*' | tr '\n' ' ')"
  done
done
run() {  # NAME BIN
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-520)"
}
for r in 1 2 3; do
  run before_cuda_$r .gpu/c84/simkit
  run new_cuda_$r $st/bin/simkit
done
for f in new_cuda_1 before_cuda_2 new_cuda_2 before_cuda_3 new_cuda_3; do
  cmp -s "$data/before_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
