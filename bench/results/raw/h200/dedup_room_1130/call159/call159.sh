#!/usr/bin/env bash
# Call 159 (2026-11-30, 1 x H200): one OwnedHandle for cuBLAS and cuSOLVER; the every-pair
# dedup path within --memory-budget (rows in slices). The GPU test programs the change
# touches, memcheck on the slices' test; a million hashes: the index, every pair with room
# for its matches (--memory-budget 1G: no slices) and without (1M: slices), auto under 1M.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
timeout 60 $st/bin/simkit_core_tests --gtest_filter='GpuHandles.*' > $final/handles.log 2>&1
echo "GpuHandles alone: exit $?, $(grep -c '^\[       OK' $final/handles.log) passed" | tee $final/context.txt
TEST_PROGRAMS="simkit_core_tests simkit_engine_tests simkit_neighbors_tests simkit_lvq_tests simkit_cca_tests simkit_embed_tests simkit_disco_tests simkit_dedup_tests simkit_cli_tests" \
  STEP_TIMEOUT=100 SAN_TIMEOUT=120 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDedup.EveryPair*' \
  timeout 330 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic ${HASHES:-1000000} --write-list "$data/h.ssdeep" > /dev/null 2>&1
run() {  # name, then simkit dedup's options
  local name=$1; shift
  local s0=$(date +%s.%N)
  timeout 120 simkit dedup $data/h.ssdeep "$@" --timings --quiet -o $data/o_$name.tsv 2> $final/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'GPU.s 7-gram\|timing: matched\|in all' $final/$name.log | sed 's/simkit: timing: //;s/simkit: //' | tr '\n' ' ')"
}
{
  run index --device cuda
  run every_pair_1G --device cuda --memory-budget 1G
  run every_pair_1M --device cuda --memory-budget 1M
  run auto_1M --device auto --memory-budget 1M
  for n in every_pair_1G every_pair_1M auto_1M; do
    cmp -s $data/o_index.tsv $data/o_$n.tsv && echo "$n equals index: $(wc -l < $data/o_$n.tsv) lines" || echo "$n DIFFERS from index"
  done
} | tee $final/summary.txt
rm -rf $data
