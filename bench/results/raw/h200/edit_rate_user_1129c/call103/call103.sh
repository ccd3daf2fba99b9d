#!/usr/bin/env bash
# Call 103 (2026-11-29, 1 x H200): an experiment's build (xp103: 17f24bd with each
# kernel's time printed, the wide kernel's share of the multiprocessors (XP_WIDE_DIV: 1/N)
# and the narrow kernel's widest band before deferring (XP_DEFER_WORDS) set from the
# environment): the pipeline at 20,000 documents under each setting.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp103.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
for r in 1 2; do
  for s in "4 4" "3 4" "2 4" "4 2" "4 8" "3 2"; do
    set -- $s
    XP_WIDE_DIV=$1 XP_DEFER_WORDS=$2 timeout 100 .gpu/xp103/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies \
      --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3 > $out/bench_$1_$2_$r.log 2>&1
    echo "div $1 defer $2 run $r: $(grep '^xp' $out/bench_$1_$2_$r.log | tail -3 | sed 's/.*: wide/wide/' | tr '\n' ';') $(grep 'bench: edit rate' $out/bench_$1_$2_$r.log | grep -o '"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*' | tr '\n' ' ')"
  done
done
tar -C $out -czf $final/logs.tgz .
