#!/usr/bin/env bash
# Call 105 (2026-11-29, 1 x H200): an experiment's build (xp105: 17f24bd with the wide
# kernel's pairs recorded: time, lengths, limit, bound, result, bands): the pipeline at
# 20,000 documents; the wide pairs that take longest.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp105.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
timeout 100 .gpu/xp105/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies \
  --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 1 > $out/bench.log 2>&1
grep '^xp' $out/bench.log | tail -13
cp $out/bench.log $final/
