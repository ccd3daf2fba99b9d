#!/usr/bin/env bash
# Call 145 (2026-11-30, 2 x H200): 9f1270b (PageLock unlocks through the device it was
# locked with): the core GPU tests; dedup of a million hashes on cuda:0, on cuda:1 twice
# and under mpirun -np 2 three times, phase by phase (call 144's ranks: 0.26-0.31 s); the
# cluster tests and bench/distributed.sh's dedup and disco.
set -u
final=$1
mkdir -p $final/logs
STEP_TIMEOUT=60 TEST_PROGRAMS="simkit_core_tests" timeout 70 bash scripts/gpu-run.sh $final/core tests > $final/core.txt 2>&1
grep '^== ' $final/core.txt
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
tar -C "$st" -xJf .gpu/mpi.tar.xz
ln -sf orterun "$st/mpi/usr/bin/mpirun"
export OPAL_PREFIX="$st/mpi/usr" PATH="$st/mpi/usr/bin:$PATH"
export LD_LIBRARY_PATH="$st/mpi/usr/lib/x86_64-linux-gnu/openmpi/lib:$st/mpi/usr/lib/x86_64-linux-gnu:$st/mpi/usr/lib/x86_64-linux-gnu/libfabric:$LD_LIBRARY_PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mca_base_component_show_load_errors=0 PMIX_MCA_pcompress_base_silence_warning=1
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
{
SIMKIT_ENGINE_STATS=1 simkit dedup $data/h.ssdeep --device cuda:0 --timings --quiet -o $data/one.tsv 2> $final/logs/one.log
echo "cuda:0: $(grep -h 'timing: matched' $final/logs/one.log)"
for r in 1 2; do
  SIMKIT_ENGINE_STATS=1 simkit dedup $data/h.ssdeep --device cuda:1 --timings --quiet -o $data/gpu1.tsv 2> $final/logs/gpu1_$r.log
  echo "cuda:1 run $r: $(grep -h 'timing: matched' $final/logs/gpu1_$r.log)"
  cmp -s $data/one.tsv $data/gpu1.tsv && echo "outputs equal" || echo "outputs DIFFER"
done
for r in 1 2 3; do
  SIMKIT_ENGINE_STATS=1 timeout 60 mpirun --bind-to none -np 2 -x SIMKIT_ENGINE_STATS simkit dedup $data/h.ssdeep --device cuda --timings --quiet -o $data/mpi.tsv 2> $final/logs/mpi_$r.log
  echo "mpi run $r: exit $? $(grep -h 'timing: matched' $final/logs/mpi_$r.log)"
  cmp -s $data/one.tsv $data/mpi.tsv && echo "outputs equal" || echo "outputs DIFFER"
done
} | tee $final/summary.txt
rm -rf $data
STEP_TIMEOUT=150 DIST_TIMEOUT=150 DIST_JOBS="dedup disco" timeout 320 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
tail -8 $final/cluster.txt
