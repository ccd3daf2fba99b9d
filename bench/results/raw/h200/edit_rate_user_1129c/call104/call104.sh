#!/usr/bin/env bash
# Call 104 (2026-11-29, 1 x H200): an experiment's build (xp104: 17f24bd with each
# kernel's time printed, the wide kernel's table budget (XP_TABLE_MB, which limits its
# blocks) and the narrow kernel's widest band before deferring (XP_DEFER_WORDS) set from
# the environment): the pipeline at 20,000 documents under each setting.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp104.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
for r in 1 2; do
  for s in "1024 4" "1024 2" "1536 2" "2048 2" "3072 2" "2048 4" "4096 2"; do
    set -- $s
    XP_TABLE_MB=$1 XP_DEFER_WORDS=$2 timeout 100 .gpu/xp104/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies \
      --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3 > $out/bench_$1_$2_$r.log 2>&1
    echo "budget $1 defer $2 run $r: $(grep '^xp' $out/bench_$1_$2_$r.log | tail -3 | sed 's/.*: wide/wide/; s/ pairs, / p /g' | tr '\n' ';') $(grep 'bench: edit rate' $out/bench_$1_$2_$r.log | grep -o '"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*\|"gpu_verify_detail":{[^}]*}' | tr '\n' ' ')"
  done
done
tar -C $out -czf $final/logs.tgz .
