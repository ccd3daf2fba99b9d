#!/usr/bin/env bash
# Call 143 (2026-11-30, 2 x H200): 6a811c6, dedup phase by phase (SIMKIT_ENGINE_STATS) at
# three million hashes (168.7 M pairs) and at one million, on cuda:0 and cuda:all, twice
# each, outputs compared: where two GPUs' time goes once the device work halves.
set -u
final=$1
mkdir -p $final/logs
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
for size in 3000000 1000000; do
  simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic $size --write-list "$data/h.ssdeep" > /dev/null 2>&1
  for r in 1 2; do
    for dev in 0 all; do
      s0=$(date +%s.%N)
      SIMKIT_ENGINE_STATS=1 timeout 60 simkit dedup $data/h.ssdeep --device cuda:$dev --timings --quiet -o $data/o_$dev.tsv 2> $final/logs/${size}_${dev}_$r.log
      echo "$size cuda:$dev run $r: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'timing: matched\|in all' $final/logs/${size}_${dev}_$r.log | sed 's/simkit: timing: //' | tr '\n' ' ')"
    done
    cmp -s $data/o_0.tsv $data/o_all.tsv && echo "$size run $r outputs equal: $(wc -l < $data/o_0.tsv) lines" || echo "$size run $r outputs DIFFER"
  done
done | tee $final/summary.txt
rm -rf $data
