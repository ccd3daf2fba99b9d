#!/usr/bin/env bash
# Call 157 (2026-11-30, 2 x H200): a review's mends to this session's code: neighbors'
# cuBLAS handle destroyed before the engine's streams; cuSOLVER handles owned
# (cuda::SolverHandle: cca, embed); match_shared decides the index's room as the command
# found it. The context tests one to a process; the GPU test programs of core, engine,
# neighbors, lvq, cca, embed, dedup and the command line; memcheck on the budgeted dedup
# test; the cluster tests; dedup's no-room rule under mpirun once more.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
for t in GpuDeviceGuard.GivesTheThreadBackItsContextOrNone GpuPageLock.LetGoOnAThreadWithoutAContextLeavesItWithout \
         GpuHandles.LetGoOnAThreadWithoutAContextLeaveItWithout; do
  timeout 60 $st/bin/simkit_core_tests --gtest_filter=$t > $final/$t.log 2>&1
  echo "$t alone: exit $?, $(grep -c '^\[       OK' $final/$t.log) passed; $(grep -c 'run it alone' $final/$t.log) could not check GPU 0"
done > $final/context.txt
cat $final/context.txt
TEST_PROGRAMS="simkit_core_tests simkit_engine_tests simkit_neighbors_tests simkit_lvq_tests simkit_cca_tests simkit_embed_tests simkit_dedup_tests simkit_cli_tests" \
  STEP_TIMEOUT=100 SAN_TIMEOUT=120 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDedup.SsdeepIndexEqualsTheCpu*' \
  timeout 330 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 300000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
timeout 100 simkit dedup $data/h.ssdeep --device cuda:0 --quiet -o $data/o_index.tsv
for d in auto cuda; do
  timeout 100 mpirun --bind-to none -np 2 simkit dedup $data/h.ssdeep --device $d --memory-budget 1M --quiet \
    -o $data/o_mpi_$d.tsv 2> $final/mpi_$d.log
  echo "mpirun -np 2, $d, no room: exit $?; $(cut -c1-90 $final/mpi_$d.log | tr '\n' ' ')"
  cmp -s $data/o_index.tsv $data/o_mpi_$d.tsv && echo "  equals one GPU's index" || echo "  DIFFERS"
done | tee $final/summary.txt
rm -rf $data
CLUSTER_TESTS=1 STEP_TIMEOUT=120 DIST_JOBS="none" timeout 150 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
tail -3 $final/cluster.txt
