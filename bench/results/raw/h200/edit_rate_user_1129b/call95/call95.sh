#!/usr/bin/env bash
# Call 95 (2026-11-29, 1 x H200): an experiment's build of the final code (xp95/) with
# time marks on stderr (SIMKIT_XP_TRACE) through the candidates, the verification and the
# whole command: where the host's time goes at 20,000 documents. The pipeline (one run
# of --reps 3) and the whole edit-rate command twice.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp95.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
export SIMKIT_XP_TRACE=1
timeout 100 .gpu/xp95/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3 > $out/bench.log 2>&1
grep 'bench: edit rate' $out/bench.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*'
awk '/xp .* signed/{n++} n==4' $out/bench.log | grep "^xp" | head -80
for r in 1 2; do
  s0=$(date +%s.%N)
  timeout 120 .gpu/xp95/simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda --timings --quiet -o "$data/o$r.tsv" 2> $out/cmd_$r.log
  echo "whole command $r: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s"
done
grep -E "^xp|timing" $out/cmd_2.log | head -80
tar -C $out -czf $final/logs.tgz .
