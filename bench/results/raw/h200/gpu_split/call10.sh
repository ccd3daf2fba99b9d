#!/usr/bin/env bash
# Call 10: neighbors' GPU split (--gpu-split: replicas sharing a batch by queries). The GPU
# tests of simkit_neighbors_tests, memcheck of the new split test, the cluster tests on two
# GPUs, then bench/distributed.sh's neighbors-warm and neighbors jobs (one GPU; cuda:all with
# --gpu-split auto, which replicates this model; cuda:all with --gpu-split rows; mpirun).
set -u
out=$1
st=$(mktemp -d); tar -C $st -xJf .gpu/stage.tar.xz
export LD_LIBRARY_PATH=$st/lib:${LD_LIBRARY_PATH:-} SIMKIT_SOURCE_DIR=$PWD SIMKIT_BINARY=$st/bin/simkit
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
t=simkit_neighbors_tests
timeout 150 $st/bin/$t --gtest_filter='*Gpu*' > $out/$t.log 2>&1
echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
grep -A6 ': Failure$' $out/$t.log | head -20
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
SIMKIT_TEST_QUICK=1 timeout 150 $cs --tool memcheck --error-exitcode 1 $st/bin/$t --gtest_filter='GpuSearch.EverySplit*' > $out/memcheck.log 2>&1
echo "memcheck EverySplit: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
STEP_TIMEOUT=200 DIST_TIMEOUT=330 DIST_JOBS="neighbors-warm neighbors" bash scripts/gpu-run.sh $out/run cluster > $out/run.txt 2>&1
echo "gpu-run: exit $?"
grep -E "simkit_cluster_tests:|agree|batch of|^neighbors|exit" $out/run.txt | head -60
