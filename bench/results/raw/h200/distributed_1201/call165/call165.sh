#!/usr/bin/env bash
# Call 165 (2026-12-01, 1 x H200): dedup's LCS in 32-bit steps where x's part has at most 32
# characters (both GPU matchers). dedup's GPU tests and memcheck on the hard-signature and
# every-pair tests; then a million hashes, every pair scored (--memory-budget 1G) and
# through the index, the code before (.gpu/base/simkit, commit 8fc644b) against this
# one, in the order base, new, new, base; outputs compared.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
tar -C $st -xJf .gpu/base.tar.xz  # the code before: $st/base/simkit
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null)" | tee $final/summary.txt
TEST_PROGRAMS="simkit_dedup_tests" STEP_TIMEOUT=120 SAN_TIMEOUT=110 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDedup.SsdeepMatchingEqualsTheCpuOnHardSignatures:GpuDedup.EveryPair*' \
  timeout 250 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt | tee -a $final/summary.txt
rm -rf $final/tests/logs*
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
run() {  # name, binary, then simkit dedup's options
  local name=$1 bin=$2; shift 2
  local s0=$(date +%s.%N)
  timeout 80 $bin dedup $data/h.ssdeep "$@" --timings --quiet -o $data/o_$name.tsv 2> $final/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'timing: matched' $final/$name.log | sed 's/simkit: timing: //')"
}
{
  for i in 1 2 3; do run index_base$i $st/base/simkit --device cuda; run index_new$i simkit --device cuda; done
  run every_base1 $st/base/simkit --device cuda --memory-budget 1G
  run every_new1 simkit --device cuda --memory-budget 1G
  run every_new2 simkit --device cuda --memory-budget 1G
  run every_base2 $st/base/simkit --device cuda --memory-budget 1G
  for n in index_new1 every_base1 every_new1 every_new2 every_base2; do
    cmp -s $data/o_index_base1.tsv $data/o_$n.tsv && echo "$n equals index_base1: $(wc -l < $data/o_$n.tsv) lines" || echo "$n DIFFERS"
  done
} | tee -a $final/summary.txt
rm -rf $data
