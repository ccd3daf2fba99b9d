#!/usr/bin/env bash
# Call 77 (2026-11-29, 1 x H200): the wide kernel's bands: 64 words, then at once the
# limit's (rather than doubling from one word); its blocks of 8 warps fill a
# multiprocessor's registers, on at most an eighth of the multiprocessors. One long pair
# (simkit_bench_dedup --long-pair, 100,000 bytes, 50 to 15,000 edits) one core against one
# warp. The dedup tests (GPU ones included); compute-sanitizer
# memcheck of the verification tests (quick shapes); then simkit_bench_dedup's GPU
# pipeline at 20,000 documents (Boost headers and edited copies) three ways, alternated
# twice: before (XP_NARROW_ONLY=1: the cores take every limit past 2,047 edits and every
# pair of 64 KB or more), new (the GPU takes every pair in memory its bands hold), and
# long-to-cores (XP_LONG_TO_CORES=1: pairs of 64 KB or more stay on the cores); the knobs
# are an experiment's, in xp_bench_dedup and xp_simkit built from this code. Then whole
# `simkit dedup --mode edit-rate` commands the same three ways (the final binary for new);
# outputs compared.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp77.tar.xz
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
grep -E "^\[       OK \] GpuVerify" $out/dedup_tests.log
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests --gtest_filter='GpuVerify.*' > $out/memcheck_verify.log 2>&1
echo "memcheck GpuVerify.* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck_verify.log | tail -1)"
for e in 50 3000 8000 15000; do
  $st/bin/simkit_bench_dedup --device cuda --long-pair 100000 --long-pair-edits $e --reps 3 > $out/long_pair_$e.json 2> $out/long_pair_$e.log
  echo "edits $e: $(grep 'long pair' $out/long_pair_$e.log)"
done
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 2000 --device cuda --no-cpu-pipeline --reps 3"
for r in 1 2; do
  XP_NARROW_ONLY=1 timeout 200 .gpu/xp_bench_dedup $b > $out/bench_before_$r.log 2>&1
  timeout 200 .gpu/xp_bench_dedup $b > $out/bench_new_$r.log 2>&1
  XP_LONG_TO_CORES=1 timeout 200 .gpu/xp_bench_dedup $b > $out/bench_long_$r.log 2>&1
  for w in before new long; do
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"candidates":[0-9]*\|"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*' | tr '\n' ' ')"
  done
done
echo "documents: $(find $data/boost $data/copies -type f | wc -l)"
run() {  # NAME BIN DEVICE [XP]
  local start=$(date +%s.%N)
  env $4 timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | sed 's/ (292420 candidates, 44 documents too repetitive to sign)//' | tr '\n' '|' | cut -c1-420)"
}
for r in 1 2; do
  run before_cuda_$r .gpu/xp_simkit cuda XP_NARROW_ONLY=1
  run final_cuda_$r $st/bin/simkit cuda X=1
  run long_cuda_$r .gpu/xp_simkit cuda XP_LONG_TO_CORES=1
done
for f in final_cuda_1 long_cuda_1 before_cuda_2 final_cuda_2 long_cuda_2; do cmp -s "$data/before_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"; done
