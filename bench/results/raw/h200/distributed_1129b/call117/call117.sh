#!/usr/bin/env bash
# Call 117 (2026-11-29, 2 x H200): the dealt rows and the plan made ahead: the GPU dedup
# tests, then dedup of a million hashes, f8042cb's simkit (b116) against this code,
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
echo "--- engine phases, now cuda:all run 2:"; grep -v timing $out/n2_2.log | head -30
echo "--- engine phases, now cuda:0 run 2:"; grep -v timing $out/n1_2.log | head -20
echo "--- engine phases, before cuda:all run 2:"; grep -v timing $out/b2_2.log | head -20
drun() {  # WAY DEVICE TAG
  local t; t=$(wall $(bin_of $1) disco similar --all --model "$data/disco.skd" --features 10000 --k 10 --precision tf32 \
    --kernel cublas --device $2 --timings --quiet -o "$data/$3.txt" 2> $out/$3.log)
  echo "disco $2 $1 ($3): $t s; $(grep -h timing $out/$3.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
}
for r in 1 2; do drun before cuda:0 db1_$r; drun now cuda:0 dn1_$r; drun before cuda:all db2_$r; drun now cuda:all dn2_$r; done
for f in dn1_1 db2_1 dn2_1 db1_2 dn1_2 db2_2 dn2_2; do cmp -s "$data/db1_1.txt" "$data/$f.txt" || echo "$f DIFFERS"; done
tar -C $out -czf $final/logs.tgz .
