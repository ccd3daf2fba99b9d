#!/usr/bin/env bash
# Call 52 (2026-11-28, 1 x H100): call 49 again after the rows' entries (and the sparse
# form's) went up through pinned buffers the cores fill (cuda::StagedCopy): the disco
# tests, the 100,000-word whole commands before and now, the sparse form on the corpora.
set -u
out=$1
. scripts/gpu-env.sh
nproc
tar -C .gpu -xJf .gpu/call52_bins.tar.xz
timeout 300 .gpu/xp_simkit_disco_tests > $out/disco_tests.log 2>&1
echo "simkit_disco_tests: exit $? $(grep -c '^\[       OK' $out/disco_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/disco_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/disco_tests.log) failed"
grep "^\[  FAILED" $out/disco_tests.log | head
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
for r in 1 2; do for p in tf32 fp16 fp32; do
  run before_${p}_$r $st/bin/simkit $p
  run now_${p}_$r .gpu/xp_simkit $p
done; done
for p in tf32 fp16 fp32; do echo "now_${p}_1 vs before_${p}_1: $(python3 .gpu/compare_lists.py $data/before_${p}_1.tsv $data/now_${p}_1.tsv)"; done
echo "now_tf32_1 vs before_fp32_1: $(python3 .gpu/compare_lists.py $data/before_fp32_1.tsv $data/now_tf32_1.tsv)"
echo "before_tf32_1 vs before_fp32_1: $(python3 .gpu/compare_lists.py $data/before_fp32_1.tsv $data/before_tf32_1.tsv)"
echo "now_tf32_2 vs now_tf32_1 (bytes): $(cmp -s $data/now_tf32_1.tsv $data/now_tf32_2.tsv && echo equal || echo DIFFER)"
tar -C $data -xJf .gpu/disco.tar.xz
for r in 1; do for who in before now; do
  prog=$st/bin/simkit_bench_disco; [ $who = now ] && prog=.gpu/xp_simkit_bench_disco
  for c in corpus corpus-py; do
    timeout 200 $prog --device cuda --corpus $data/disco/$c.txt --json $out/sparse_${who}_${c}_$r.json > $out/sparse_${who}_${c}_$r.log 2>&1
    echo "sparse $who $c $r: $(grep -o 'all [0-9]* words, sparse form on the GPU: .*' $out/sparse_${who}_${c}_$r.log)"
  done
done; done
