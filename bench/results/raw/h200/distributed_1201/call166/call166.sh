#!/usr/bin/env bash
# Call 166 (2026-12-01, 1 x H200): dedup's every-pair kernel meeting 2 y signatures a thread
# at once (their LCS chains side by side), against the code before
# this session's kernel changes (.gpu/base.tar.xz, 8fc644b). dedup's GPU tests and memcheck
# on the hard-signature and every-pair tests; a million hashes every pair scored
# (--memory-budget 1G) and through the index; outputs compared. At most 8 files in OUT.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
tar -C $st -xJf .gpu/base.tar.xz
sum=$final/summary.txt
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null)" | tee $sum
TEST_PROGRAMS="simkit_dedup_tests" STEP_TIMEOUT=120 SAN_TIMEOUT=110 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDedup.SsdeepMatchingEqualsTheCpuOnHardSignatures:GpuDedup.EveryPair*' \
  timeout 250 bash scripts/gpu-run.sh /tmp/t tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt | tee -a $sum
grep -B2 -A12 ': Failure$' /tmp/t/logs/*.log 2>/dev/null | head -60 >> $final/tests.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
run() {  # name, binary, then simkit dedup's options
  local name=$1 bin=$2; shift 2
  local s0=$(date +%s.%N)
  timeout 80 $bin dedup $data/h.ssdeep "$@" --timings --quiet -o $data/o_$name.tsv 2> $data/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'timing: found\|timing: matched\|in all' $data/$name.log | sed 's/simkit: timing: //' | tr '\n' ' ')"
}
{
  for i in 1 2 3; do run index_base$i $st/base/simkit --device cuda; run index_w2_$i simkit --device cuda; done
  run every_base1 $st/base/simkit --device cuda --memory-budget 1G
  run every_w2_1 simkit --device cuda --memory-budget 1G
  run every_w2_2 simkit --device cuda --memory-budget 1G
  run every_base2 $st/base/simkit --device cuda --memory-budget 1G
  for n in index_w2_1 every_base1 every_w2_1 every_w2_2; do
    cmp -s $data/o_index_base1.tsv $data/o_$n.tsv && echo "$n equals index_base1: $(wc -l < $data/o_$n.tsv) lines" || echo "$n DIFFERS"
  done
} | tee -a $sum
tar -C $data -czf $final/logs.tgz $(cd $data && ls *.log)
rm -rf $data
