#!/usr/bin/env bash
# Call 54 (2026-11-28, 1 x H100): the final code after the review (the cost model's depth
# rounded as meant, a strict SIMKIT_DISCO_PRODUCT_COLUMNS, the lists' build counted in the
# budget; a new test of the scorer's own choice at 5,000 words): the disco tests,
# compute-sanitizer memcheck and racecheck of the listed-column tests, and the 100,000-word
# whole commands before (the stage of 5bbdf9f) and now.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call54_bins.tar.xz
timeout 300 .gpu/xp_simkit_disco_tests > $out/disco_tests.log 2>&1
echo "simkit_disco_tests: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/disco_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
grep -B2 -A10 ": Failure" $out/disco_tests.log | head -30
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/xp_simkit_disco_tests --gtest_filter='GpuDisco.ListedColumns*:GpuDisco.SparseEquals*' > $out/memcheck.log 2>&1
echo "memcheck ListedColumns*, SparseEquals: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1) $(grep -c '^\[       OK' $out/memcheck.log) passed"
SIMKIT_TEST_QUICK=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/xp_simkit_disco_tests --gtest_filter='GpuDisco.ListedColumnsChosen*:GpuDisco.SparseEquals*' > $out/racecheck.log 2>&1
echo "racecheck ListedColumnsChosen, SparseEquals: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $out/racecheck.log | tail -1) $(grep -c '^\[       OK' $out/racecheck.log) passed"
data=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 100000 --features 10000 --write-model $data/disco.skd > /dev/null 2>&1
run() {  # NAME PROGRAM PRECISION
  local name=$1 prog=$2 prec=$3
  local s=$(date +%s.%N)
  SIMKIT_ENGINE_STATS=1 timeout 120 $prog disco similar --all --model $data/disco.skd --features 10000 --k 10 \
    --precision $prec --kernel cublas --device cuda --timings -q -o $data/$name.tsv > $out/$name.log 2>&1
  local st_=$?
  echo "$name: exit $st_ wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}") s | $(grep -o 'product [0-9]* of [0-9]* ([0-9]* listed entries), upload, scatter and lists [0-9.]* ms' $out/$name.log | tail -1) | job $(grep -o 'columns) on .* in [0-9.]* s ([0-9.]* ms on the device)' $out/$name.log | grep -o 'in [0-9.]* s.*') | $(grep -h 'timing' $out/$name.log | grep -o 'began [0-9.]* s\|read [0-9]* words in [0-9.]* s\|made in [0-9.]* s\|waited [0-9.]* s\|written in [0-9.]* s' | paste -sd ' ' -)"
}
for r in 1 2; do
  run before_tf32_$r $st/bin/simkit tf32
  run now_tf32_$r .gpu/xp_simkit tf32
done
run before_fp16 $st/bin/simkit fp16; run now_fp16 .gpu/xp_simkit fp16
run before_fp32 $st/bin/simkit fp32; run now_fp32 .gpu/xp_simkit fp32
echo "now_tf32_1 vs before_tf32_1: $(python3 .gpu/compare_lists.py $data/before_tf32_1.tsv $data/now_tf32_1.tsv)"
echo "now_fp32 vs before_fp32: $(python3 .gpu/compare_lists.py $data/before_fp32.tsv $data/now_fp32.tsv)"
echo "now_tf32_2 vs now_tf32_1 (bytes): $(cmp -s $data/now_tf32_1.tsv $data/now_tf32_2.tsv && echo equal || echo DIFFER)"
