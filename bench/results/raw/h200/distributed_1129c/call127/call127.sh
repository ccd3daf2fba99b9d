#!/usr/bin/env bash
# Call 127 (2026-11-29, 2 x H200): where dedup's time goes under mpirun -np 2 (a GPU a
# rank, a million hashes): every rank's --timings and engine phases, all cores a rank and
# half the cores a rank.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C "$st" -xJf .gpu/mpi.tar.xz
ln -sf orterun "$st/mpi/usr/bin/mpirun"
export OPAL_PREFIX="$st/mpi/usr" PATH="$st/mpi/usr/bin:$st/bin:$PATH"
export LD_LIBRARY_PATH="$st/mpi/usr/lib/x86_64-linux-gnu/openmpi/lib:$st/mpi/usr/lib/x86_64-linux-gnu:$st/mpi/usr/lib/x86_64-linux-gnu/libfabric:$LD_LIBRARY_PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mca_base_component_show_load_errors=0 \
  PMIX_MCA_pcompress_base_silence_warning=1
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/hashes.ssdeep" > /dev/null 2>&1
for r in 1 2; do
  echo "=== mpirun -np 2, all cores a rank, run $r"
  SIMKIT_ENGINE_STATS=1 mpirun --bind-to none -np 2 -x SIMKIT_ENGINE_STATS --tag-output simkit dedup "$data/hashes.ssdeep" --device cuda --timings --quiet -o "$data/m$r.tsv" 2>&1 | grep -v "^$"
done
echo "=== mpirun -np 2, 16 threads a rank"
SIMKIT_ENGINE_STATS=1 mpirun --bind-to none -np 2 -x SIMKIT_ENGINE_STATS --tag-output simkit dedup "$data/hashes.ssdeep" --device cuda --threads 16 --timings --quiet -o "$data/m3.tsv" 2>&1 | grep -v "^$"
echo "=== one GPU"
SIMKIT_ENGINE_STATS=1 simkit dedup "$data/hashes.ssdeep" --device cuda:0 --timings --quiet -o "$data/one.tsv" 2>&1
for f in m1 m2 m3; do cmp -s $data/one.tsv $data/$f.tsv || echo "$f DIFFERS"; done
