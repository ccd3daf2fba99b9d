#!/usr/bin/env bash
# Call 16: the final code's figures (commit 18d0889): bench/distributed.sh's neighbors-warm
# (one GPU, --gpu-split auto, rows) and dedup (one GPU, cuda:all, mpirun -np 2) jobs.
set -u
out=$1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
CLUSTER_TESTS=0 DIST_TIMEOUT=330 DIST_JOBS="dedup neighbors-warm" bash scripts/gpu-run.sh $out/run cluster > $out/run.txt 2>&1
echo "gpu-run: exit $?"
grep -E "batch of|^dedup|exit" $out/run.txt | head -30
