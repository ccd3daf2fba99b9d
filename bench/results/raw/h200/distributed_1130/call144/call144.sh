#!/usr/bin/env bash
# Call 144 (2026-11-30, 2 x H200): 6a811c6, dedup of a million hashes under
# mpirun -np 2 (a GPU a rank) three times, phase by phase on every rank
# (SIMKIT_ENGINE_STATS), beside cuda:0 once: call 142's mpirun run took 0.296 s where
# earlier calls took 0.12-0.16 s.
set -u
final=$1
mkdir -p $final/logs
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
SIMKIT_ENGINE_STATS=1 simkit dedup $data/h.ssdeep --device cuda:0 --timings --quiet -o $data/one.tsv 2> $final/logs/one.log
grep -h "timing: matched" $final/logs/one.log
for r in 1 2 3; do
  SIMKIT_ENGINE_STATS=1 timeout 60 mpirun --bind-to none -np 2 -x SIMKIT_ENGINE_STATS simkit dedup $data/h.ssdeep --device cuda --timings --quiet -o $data/mpi.tsv 2> $final/logs/mpi_$r.log
  echo "mpi run $r: exit $? $(grep -h 'timing: matched' $final/logs/mpi_$r.log)"
  cmp -s $data/one.tsv $data/mpi.tsv && echo "outputs equal" || echo "outputs DIFFER"
done | tee $final/summary.txt
rm -rf $data
