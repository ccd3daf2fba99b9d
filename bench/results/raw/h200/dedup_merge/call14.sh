#!/usr/bin/env bash
# Call 14: dedup's workers' sorted matches merged instead of sorted again (match_shared): the
# GPU dedup tests, the cluster tests on two GPUs, then bench/distributed.sh's dedup job (a
# million hashes; one GPU, cuda:all, mpirun -np 2) twice on the same data.
set -u
out=$1
st=$(mktemp -d); tar -C $st -xJf .gpu/stage.tar.xz
export LD_LIBRARY_PATH=$st/lib:${LD_LIBRARY_PATH:-} SIMKIT_SOURCE_DIR=$PWD SIMKIT_BINARY=$st/bin/simkit
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
t=simkit_dedup_tests
timeout 200 $st/bin/$t --gtest_filter="*Gpu*:*Sorted*" > $out/$t.log 2>&1
echo "$t: exit $? $(grep -c "^\[       OK" $out/$t.log) passed $(grep -c "^\[  FAILED  \] .*(" $out/$t.log) failed"
export DIST_DATA=$(mktemp -d)
STEP_TIMEOUT=200 DIST_TIMEOUT=200 DIST_JOBS="dedup" bash scripts/gpu-run.sh $out/run1 cluster > $out/run1.txt 2>&1
echo "gpu-run 1: exit $?"; grep -E "simkit_cluster_tests:|^dedup" $out/run1.txt | head
CLUSTER_TESTS=0 DIST_TIMEOUT=150 DIST_JOBS="dedup" bash scripts/gpu-run.sh $out/run2 cluster > $out/run2.txt 2>&1
echo "gpu-run 2: exit $?"; grep -E "^dedup" $out/run2.txt | head
