#!/usr/bin/env bash
# Call 160 (2026-11-30, 2 x H200): this session's final code on two GPUs: the context tests
# alone (each checks that GPU 0's context is never made), the GPU test programs that use
# several GPUs or cuBLAS/cuSOLVER handles (core, neighbors, lvq, cca, embed) and dedup's,
# memcheck on the every-pair slices' tests; a million hashes: the index and every pair in
# slices (--memory-budget 1M); the cluster tests and bench/distributed.sh's disco and dedup.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
for t in GpuDeviceGuard.GivesTheThreadBackItsContextOrNone GpuPageLock.LetGoOnAThreadWithoutAContextLeavesItWithout \
         GpuHandles.LetGoOnAThreadWithoutAContextLeaveItWithout; do
  timeout 60 $st/bin/simkit_core_tests --gtest_filter=$t > $final/$t.log 2>&1
  echo "$t alone: exit $?, $(grep -c '^\[       OK' $final/$t.log) passed; $(grep -c 'run it alone' $final/$t.log) could not check GPU 0"
done > $final/context.txt
cat $final/context.txt
TEST_PROGRAMS="simkit_core_tests simkit_neighbors_tests simkit_lvq_tests simkit_cca_tests simkit_embed_tests simkit_dedup_tests" \
  STEP_TIMEOUT=100 SAN_TIMEOUT=100 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" SAN_FILTER='GpuDedup.EveryPair*' \
  timeout 220 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
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
  run index --device cuda:0
  run every_pair_1M --device cuda:0 --memory-budget 1M
  cmp -s $data/o_index.tsv $data/o_every_pair_1M.tsv && echo "every_pair_1M equals index: $(wc -l < $data/o_index.tsv) lines" || echo "every_pair_1M DIFFERS"
} | tee $final/summary.txt
rm -rf $data
CLUSTER_TESTS=1 STEP_TIMEOUT=120 DIST_JOBS="disco dedup" DIST_TIMEOUT=150 timeout 200 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
grep '^== \|^|' $final/cluster.txt | tail -14
rm -rf $final/tests/logs* $final/cluster/distributed/*/ 2>/dev/null
