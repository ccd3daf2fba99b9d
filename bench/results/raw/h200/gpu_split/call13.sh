#!/usr/bin/env bash
# Calls 12 and 13 (12: host phases shared: answers, exact order and placing on all cores; 13:
# replicas across ranks too) ran this script; call 11 ran it without the neighbors tests and
# with CLUSTER_TESTS=0 (no cluster tests). A call for neighbors' split figures (bench/distributed.sh neighbors-warm and
# neighbors: one GPU, cuda:all with --gpu-split auto = replicas, cuda:all --gpu-split rows,
# mpirun), then the warm batches' host phases (SIMKIT_ENGINE_STATS) on one GPU and on two.
set -u
out=$1
st=$(mktemp -d); tar -C $st -xJf .gpu/stage.tar.xz
export LD_LIBRARY_PATH=$st/lib:${LD_LIBRARY_PATH:-} SIMKIT_SOURCE_DIR=$PWD SIMKIT_BINARY=$st/bin/simkit
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
t=simkit_neighbors_tests
timeout 150 $st/bin/$t --gtest_filter="*Gpu*" > $out/$t.log 2>&1
echo "$t: exit $? $(grep -c "^\[       OK" $out/$t.log) passed $(grep -c "^\[  FAILED  \] .*(" $out/$t.log) failed"
STEP_TIMEOUT=200 DIST_TIMEOUT=330 DIST_JOBS="neighbors-warm neighbors" bash scripts/gpu-run.sh $out/run cluster > $out/run.txt 2>&1
echo "gpu-run: exit $?"
grep -E "simkit_cluster_tests:|agree|batch of|^neighbors|exit" $out/run.txt | head -40
for dev in cuda:0 cuda:all; do
  SIMKIT_ENGINE_STATS=1 timeout 90 $st/bin/simkit_bench_neighbors --device $dev --precisions fp32 --batch 8192 --check 0 \
    --single-reps 1 --batch-reps 6 --skip-ceilings --skip-tiles > /dev/null 2> $out/stats_${dev/:/_}.log
  echo "== $dev (last batch's phases)"; grep -E "batch of" $out/stats_${dev/:/_}.log
  grep -vE "^bench" $out/stats_${dev/:/_}.log | tail -12
done
