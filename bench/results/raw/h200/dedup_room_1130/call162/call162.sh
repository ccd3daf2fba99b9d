#!/usr/bin/env bash
# Call 162 (2026-11-30, 1 x H200): the final code (80aead3): dedup's GPU tests and memcheck
# on the every-pair slice tests; a million hashes every pair with room for its matches
# (--memory-budget 1G: no slices) and without (1M: slices), the second call of each beside
# calls 159-160, and the index.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
TEST_PROGRAMS="simkit_dedup_tests" STEP_TIMEOUT=100 SAN_TIMEOUT=100 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDedup.EveryPair*' timeout 220 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
run() {  # name, then simkit dedup's options
  local name=$1; shift
  local s0=$(date +%s.%N)
  timeout 80 simkit dedup $data/h.ssdeep "$@" --timings --quiet -o $data/o_$name.tsv 2> $final/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'timing: matched\|in all' $final/$name.log | sed 's/simkit: timing: //;s/simkit: //' | tr '\n' ' ')"
}
{
  run index --device cuda
  run every_pair_1G --device cuda --memory-budget 1G
  run every_pair_1M --device cuda --memory-budget 1M
  for n in every_pair_1G every_pair_1M; do
    cmp -s $data/o_index.tsv $data/o_$n.tsv && echo "$n equals index: $(wc -l < $data/o_$n.tsv) lines" || echo "$n DIFFERS from index"
  done
} | tee $final/summary.txt
rm -rf $data $final/tests/logs*
