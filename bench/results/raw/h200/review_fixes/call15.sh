#!/usr/bin/env bash
# Call 15 (the review's fixes: replicas count their share of a shared GPU, indices sharing a
# GPU built one after another, the split test at fp16 and through the fused filter, dedup's
# merge within twice the matches' memory): the GPU tests of simkit_neighbors_tests and
# simkit_dedup_tests, memcheck of the split test, and the whole cluster tests on two GPUs.
set -u
out=$1
st=$(mktemp -d); tar -C $st -xJf .gpu/stage.tar.xz
export LD_LIBRARY_PATH=$st/lib:${LD_LIBRARY_PATH:-} SIMKIT_SOURCE_DIR=$PWD SIMKIT_BINARY=$st/bin/simkit
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
for t in simkit_neighbors_tests simkit_dedup_tests; do
  timeout 200 $st/bin/$t --gtest_filter="*Gpu*:*Sorted*" > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c "^\[       OK" $out/$t.log) passed $(grep -c "^\[  FAILED  \] .*(" $out/$t.log) failed"
  grep -A6 ': Failure$' $out/$t.log | head -20
done
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
SIMKIT_TEST_QUICK=1 timeout 200 $cs --tool memcheck --error-exitcode 1 $st/bin/simkit_neighbors_tests --gtest_filter='GpuSearch.EverySplit*' > $out/memcheck.log 2>&1
echo "memcheck EverySplit: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
CLUSTER_BENCH=0 STEP_TIMEOUT=200 bash scripts/gpu-run.sh $out/run cluster > $out/run.txt 2>&1
echo "gpu-run: exit $?"; grep -E "simkit_cluster_tests:" $out/run.txt | head -1
