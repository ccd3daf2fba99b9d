#!/usr/bin/env bash
# Call 155 (2026-11-30, 1 x H200): call 154's rule after its review (every rank asks
# whether the index has room; sizes in GiB/MiB): the dedup and command-line GPU tests, and
# 300,000 hashes under --memory-budget 1M with auto and with cuda, outputs compared.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
TEST_PROGRAMS="simkit_dedup_tests simkit_cli_tests" STEP_TIMEOUT=150 \
  timeout 320 bash scripts/gpu-run.sh $final/tests tests > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 300000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
for d in auto cuda; do
  timeout 100 simkit dedup $data/h.ssdeep --device $d --memory-budget 1M --quiet -o $data/o_$d.tsv 2> $final/$d.log
  echo "$d: exit $?; $(cat $final/$d.log)"
done | tee $final/summary.txt
timeout 100 simkit dedup $data/h.ssdeep --device cuda --quiet -o $data/o_index.tsv
for d in auto cuda; do cmp -s $data/o_index.tsv $data/o_$d.tsv && echo "$d equals the index's: $(wc -l < $data/o_$d.tsv) lines" || echo "$d DIFFERS"; done | tee -a $final/summary.txt
rm -rf $data
