#!/usr/bin/env bash
# Call 154 (2026-11-30, 1 x H200): dedup's GPU index given no room (its memory, or
# --memory-budget): --device auto matches through the CPU's index, --device cuda scores
# every compatible pair on the GPU, each saying so. The dedup and command-line GPU tests,
# then a million hashes four ways (the index on the GPU, every pair on the GPU, auto with
# no room, the CPU), outputs compared: what the auto rule saves.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
TEST_PROGRAMS="simkit_dedup_tests simkit_cli_tests" STEP_TIMEOUT=150 \
  timeout 320 bash scripts/gpu-run.sh $final/tests tests > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic ${HASHES:-1000000} --write-list "$data/h.ssdeep" > /dev/null 2>&1
run() {  # name, then simkit dedup's options
  local name=$1; shift
  local s0=$(date +%s.%N)
  timeout 200 simkit dedup $data/h.ssdeep "$@" --timings --quiet -o $data/o_$name.tsv 2> $final/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'GPU.s 7-gram\|timing: matched\|in all' $final/$name.log | sed 's/simkit: timing: //;s/simkit: //' | tr '\n' ' ')"
}
{
  run index --device cuda
  run every_pair --device cuda --memory-budget 1M
  run auto_no_room --device auto --memory-budget 1M
  run cpu --device cpu
  for n in every_pair auto_no_room cpu; do
    cmp -s $data/o_index.tsv $data/o_$n.tsv && echo "$n equals index: $(wc -l < $data/o_$n.tsv) lines" || echo "$n DIFFERS from index"
  done
} | tee $final/summary.txt
rm -rf $data
