#!/usr/bin/env bash
# Call 119 (2026-11-29, 2 x H200): call 118's code with a dealt worker's matches kept on
# its GPU and brought down as one run: the GPU dedup tests, then dedup of a million hashes, f8042cb's simkit (b116) against this code,
# cuda:0 and cuda:all alternated, engine phases printed (SIMKIT_ENGINE_STATS); disco
# 200,000 x 10,000 cuda:0 / cuda:all each way; outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/b116.tar.xz
t=simkit_dedup_tests
timeout 200 $st/bin/$t --gtest_filter='GpuDedup*:CtphMatch*' > $out/$t.log 2>&1
echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
grep -B5 '^\[  FAILED  \] .*(' $out/$t.log | head -30
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
$st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/hashes.ssdeep" > /dev/null 2>&1
$st/bin/simkit_bench_disco --sizes 200000 --features 10000 --write-model "$data/disco.skd" > /dev/null 2>&1
bin_of() { case $1 in before) echo .gpu/b116/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
run() {  # WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $1) dedup "$data/hashes.ssdeep" --device $2 --timings --quiet -o "$data/$3.tsv" 2> $out/$3.log)
  echo "dedup $2 $1 ($3): $t s; $(grep -h timing $out/$3.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
}
for r in 1 2 3; do
  run before cuda:0 b1_$r; run now cuda:0 n1_$r; run before cuda:all b2_$r; run now cuda:all n2_$r
done
for f in $out/*.log; do :; done
for r in 1 2 3; do for f in n1_$r b2_$r n2_$r b1_$r; do cmp -s "$data/b1_1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"; done; done
echo "outputs compared: $(wc -l < $data/b1_1.tsv) lines"
echo "--- engine phases, now cuda:all run 2:"; grep -v timing $out/n2_2.log | tail -16
echo "--- engine phases, now cuda:0 run 2:"; grep -v timing $out/n1_2.log | tail -7
tar -C $out -czf $final/logs.tgz .
# The cluster tests, then bench/distributed.sh's dedup and disco (one GPU / cuda:all / mpirun -np 2).
STEP_TIMEOUT=200 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -12
# Every test program on the GPU.
STEP_TIMEOUT=200 bash scripts/gpu-run.sh $final/tests tests 2>&1 | tail -30
