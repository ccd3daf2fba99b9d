#!/usr/bin/env bash
# Call 167 (2026-12-01, 1 x H200): where dedup's every-pair kernel spends its time (Nsight
# Compute on 200,000 hashes, every pair scored), and 4 y signatures a thread at once
# (.gpu/w4.tar.xz) against 2 (this stage) at a million hashes, in the order 2, 4, 4, 2.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
tar -C $st -xJf .gpu/w4.tar.xz
sum=$final/summary.txt
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null); ncu: $(command -v ncu)" | tee $sum
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
head -n 200001 $data/h.ssdeep > $data/h200k.ssdeep
timeout 200 ncu --kernel-name regex:match_kernel --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --csv --page details \
  simkit dedup $data/h200k.ssdeep --device cuda --memory-budget 100M --quiet -o $data/o_ncu.tsv > $final/ncu.csv 2> $data/ncu.err
echo "ncu: exit $? $(wc -l < $final/ncu.csv) lines; $(tail -n 2 $data/ncu.err)" | tee -a $sum
xz -9 $final/ncu.csv
run() {  # name, binary, then simkit dedup's options
  local name=$1 bin=$2; shift 2
  local s0=$(date +%s.%N)
  timeout 80 $bin dedup $data/h.ssdeep "$@" --timings --quiet -o $data/o_$name.tsv 2> $data/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'timing: matched\|in all' $data/$name.log | sed 's/simkit: timing: //' | tr '\n' ' ')"
}
{
  run every_w2_1 simkit --device cuda --memory-budget 1G
  run every_w4_1 $st/w4/simkit --device cuda --memory-budget 1G
  run every_w4_2 $st/w4/simkit --device cuda --memory-budget 1G
  run every_w2_2 simkit --device cuda --memory-budget 1G
  cmp -s $data/o_every_w2_1.tsv $data/o_every_w4_1.tsv && echo "w4 equals w2: $(wc -l < $data/o_every_w4_1.tsv) lines" || echo "w4 DIFFERS"
} | tee -a $sum
rm -rf $data
