#!/usr/bin/env bash
# Call 101 (2026-11-29, 1 x H200): an experiment's build (xp101: 41f1c06 with the narrow
# verification kernel's time per pair counted by clock64, by what became of the pair and
# the widest band it took): where the narrow kernel's time goes at 20,000 documents.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp101.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
timeout 100 .gpu/xp101/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 \
  --device cuda --no-cpu-pipeline --reps 2 > $out/bench.log 2>&1
grep "^xp" $out/bench.log | tail -40
grep 'bench: edit rate' $out/bench.log
cp $out/bench.log $final/
