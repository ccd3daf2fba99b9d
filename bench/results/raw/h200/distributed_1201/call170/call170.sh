#!/usr/bin/env bash
# Call 170 (2026-12-01, 1 x H200): the final code (803e67a: the narrow mask read as a
# conversion): dedup GPU tests, memcheck on the real-file, hard-signature and every-pair
# tests; a million hashes every pair scored (--memory-budget 1G) and through the index,
# outputs compared.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
sum=$final/summary.txt
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null)" | tee $sum
TEST_PROGRAMS="simkit_dedup_tests" STEP_TIMEOUT=120 SAN_TIMEOUT=150 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDedup.SsdeepMatchingEqualsTheCpuOn*:GpuDedup.EveryPair*' \
  timeout 250 bash scripts/gpu-run.sh /tmp/t tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt | tee -a $sum
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
for name in index every; do
  extra=(); [ $name = every ] && extra=(--memory-budget 1G)
  s0=$(date +%s.%N)
  timeout 80 simkit dedup $data/h.ssdeep --device cuda "${extra[@]}" --timings --quiet -o $data/o_$name.tsv 2> $data/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'timing: matched' $data/$name.log | sed 's/simkit: timing: //')" | tee -a $sum
done
cmp -s $data/o_index.tsv $data/o_every.tsv && echo "every equals index: $(wc -l < $data/o_every.tsv) lines" | tee -a $sum || echo "every DIFFERS" | tee -a $sum
rm -rf $data
