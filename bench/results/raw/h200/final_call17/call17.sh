#!/usr/bin/env bash
# Call 17: a second call for the whole neighbors command's figures on the code of 18d0889
# (one GPU; cuda:all with --gpu-split auto; mpirun -np 2, which replicates since call 13;
# cuda:all --gpu-split rows), twice on the same data.
set -u
out=$1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export DIST_DATA=$(mktemp -d)
nvidia-smi -L
for run in 1 2; do
  CLUSTER_TESTS=0 DIST_TIMEOUT=120 DIST_JOBS="neighbors" bash scripts/gpu-run.sh $out/run$run cluster > $out/run$run.txt 2>&1
  echo "run $run: exit $?"; grep -E "^neighbors" $out/run$run.txt | head -5
done
