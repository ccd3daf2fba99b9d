#!/usr/bin/env bash
# Call 46 (2026-11-28, 1 x H100): as call 45, after the lists kernel searched 32 features at once and the lists were made on the device.
# beside the product of the common ones. The disco tests (GPU ones included), memcheck of
# the new test; then `disco similar --all` on 100,000 synthetic words x 10,000 columns, TF32
# and fp16, the whole command with the product over N columns (SIMKIT_DISCO_PRODUCT_COLUMNS)
# and the automatic choice, against the code before (the stage of 5bbdf9f) in the same call.
set -u
out=$1
. scripts/gpu-env.sh
nproc
tar -C .gpu -xJf .gpu/call46_bins.tar.xz
timeout 300 .gpu/xp_simkit_disco_tests > $out/disco_tests.log 2>&1
echo "simkit_disco_tests: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/disco_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
grep "^\[  FAILED\|Failure\|Expected\|Which is\|trace\|columns in the product" $out/disco_tests.log | head -20
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/xp_simkit_disco_tests --gtest_filter='GpuDisco.ListedColumns*:GpuDisco.SparseEquals*' > $out/memcheck.log 2>&1
echo "memcheck ListedColumns, Sparse: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 100000 --features 10000 --write-model $data/disco.skd > /dev/null 2>&1
run() {  # NAME PROGRAM PRECISION [COLUMNS]
  local name=$1 prog=$2 prec=$3 cols=${4:-}
  local s=$(date +%s.%N)
  SIMKIT_ENGINE_STATS=1 SIMKIT_DISCO_PRODUCT_COLUMNS=$cols timeout 120 $prog disco similar --all --model $data/disco.skd --features 10000 --k 10 \
    --precision $prec --kernel cublas --device cuda --timings -q -o $data/$name.tsv > $out/$name.log 2>&1
  local st_=$?
  echo "$name: exit $st_ wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}") s | $(grep -o 'product [0-9]* of [0-9]* ([0-9]* listed entries), upload, scatter and lists [0-9.]* ms' $out/$name.log | tail -1) | job $(grep -o 'columns) on .* in [0-9.]* s ([0-9.]* ms on the device)' $out/$name.log | grep -o 'in [0-9.]* s.*') | $(grep -h 'timing' $out/$name.log | grep -o 'began [0-9.]* s\|read [0-9]* words in [0-9.]* s\|waited [0-9.]* s\|written in [0-9.]* s' | paste -sd ' ' -)"
}
run before_tf32 $st/bin/simkit tf32
run all_tf32 .gpu/xp_simkit tf32 10000
for c in 4096 2048 1536 1024 768 512 384 256 128 64; do run c${c}_tf32 .gpu/xp_simkit tf32 $c; done
run auto_tf32 .gpu/xp_simkit tf32
run before_tf32_2 $st/bin/simkit tf32
run auto_tf32_2 .gpu/xp_simkit tf32
run before_fp16 $st/bin/simkit fp16
run auto_fp16 .gpu/xp_simkit fp16
for c in 2048 1024 512 256; do run c${c}_fp16 .gpu/xp_simkit fp16 $c; done
run before_fp32 $st/bin/simkit fp32
run auto_fp32 .gpu/xp_simkit fp32
for c in 2048 1024 512 256; do run c${c}_fp32 .gpu/xp_simkit fp32 $c; done
for n in all_tf32 c1024_tf32 c256_tf32 c64_tf32 auto_tf32; do echo "$n vs before_tf32: $(python3 .gpu/compare_lists.py $data/before_tf32.tsv $data/$n.tsv)"; done
echo "auto_fp16 vs before_fp16: $(python3 .gpu/compare_lists.py $data/before_fp16.tsv $data/auto_fp16.tsv)"
echo "auto_fp32 vs before_fp32: $(python3 .gpu/compare_lists.py $data/before_fp32.tsv $data/auto_fp32.tsv)"
echo "auto_tf32 vs before_fp32: $(python3 .gpu/compare_lists.py $data/before_fp32.tsv $data/auto_tf32.tsv)"
echo "before_tf32 vs before_fp32: $(python3 .gpu/compare_lists.py $data/before_fp32.tsv $data/before_tf32.tsv)"
