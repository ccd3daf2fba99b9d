#!/usr/bin/env bash
# Call 156 (2026-11-30, 2 x H200): this session's code (5154e01) on two GPUs. The three
# context tests one to a process (their check that GPU 0's context is never made needs
# two GPUs), the dedup GPU tests, the cluster tests; then dedup's index given no room
# (--memory-budget 1M) under mpirun -np 2 (a GPU a rank) and on cuda:all, with auto and
# with cuda, outputs compared with one GPU's index; then bench/distributed.sh's dedup and
# disco once.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
for t in GpuDeviceGuard.GivesTheThreadBackItsContextOrNone GpuPageLock.LetGoOnAThreadWithoutAContextLeavesItWithout \
         GpuHandles.LetGoOnAThreadWithoutAContextLeaveItWithout; do
  timeout 60 $st/bin/simkit_core_tests --gtest_filter=$t > $final/$t.log 2>&1
  echo "$t alone: exit $?, $(grep -c '^\[       OK' $final/$t.log) passed; $(grep -c 'run it alone' $final/$t.log) could not check GPU 0"
done
TEST_PROGRAMS="simkit_dedup_tests" STEP_TIMEOUT=120 timeout 200 bash scripts/gpu-run.sh $final/tests tests > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 300000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
timeout 100 simkit dedup $data/h.ssdeep --device cuda:0 --quiet -o $data/o_index.tsv
{
  for d in auto cuda; do
    timeout 150 mpirun --bind-to none -np 2 simkit dedup $data/h.ssdeep --device $d --memory-budget 1M --timings --quiet \
      -o $data/o_mpi_$d.tsv 2> $final/mpi_$d.log
    echo "mpirun -np 2, $d: exit $?; $(grep -h "7-gram\|timing: matched" $final/mpi_$d.log | tr '\n' ' ')"
    cmp -s $data/o_index.tsv $data/o_mpi_$d.tsv && echo "  equals one GPU's index" || echo "  DIFFERS"
  done
  timeout 150 simkit dedup $data/h.ssdeep --device cuda:all --memory-budget 1M --timings --quiet -o $data/o_all.tsv 2> $final/all.log
  echo "cuda:all, no room: exit $?; $(grep -h "7-gram\|timing: matched" $final/all.log | tr '\n' ' ')"
  cmp -s $data/o_index.tsv $data/o_all.tsv && echo "  equals one GPU's index" || echo "  DIFFERS"
  timeout 150 mpirun --bind-to none -np 2 simkit dedup $data/h.ssdeep --device cuda --timings --quiet -o $data/o_mpi.tsv 2> $final/mpi.log
  echo "mpirun -np 2, cuda, room: exit $?; $(grep -h "7-gram\|timing: matched" $final/mpi.log | tr '\n' ' ')"
  cmp -s $data/o_index.tsv $data/o_mpi.tsv && echo "  equals one GPU's index" || echo "  DIFFERS"
} | tee $final/summary.txt
rm -rf $data
STEP_TIMEOUT=120 DIST_TIMEOUT=100 DIST_JOBS="dedup disco" timeout 260 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
tail -7 $final/cluster.txt
