#!/usr/bin/env bash
# Call 65 (2026-11-28, the 4-GPU kind, after call 64): disco 200k x 10k TF32 and dedup 1M
# hashes three ways on 4 GPUs and on 2 (CUDA_VISIBLE_DEVICES=0,1), the same data; the warm
# neighbors batch (8,192 queries over 2,196,016 x 300) on 1 and 4 GPUs with PyTorch's peer.
set -u
out=$1
mkdir -p $out
nvidia-smi -L; nproc
mkdir -p .gpu/data
export DIST_DATA=$PWD/.gpu/data NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for n in 4 2; do
  vis=0,1,2,3; [ $n = 2 ] && vis=0,1
  CUDA_VISIBLE_DEVICES=$vis DIST_GPUS=$n CLUSTER_TESTS=0 DIST_TIMEOUT=240 STEP_TIMEOUT=200 SIMKIT_ENGINE_STATS=1 DIST_JOBS="disco dedup" bash scripts/gpu-run.sh $out/dist$n cluster > $out/dist$n.txt 2>&1
  echo "dist$n: exit $?"; grep -P '^(disco|dedup)\s' $out/dist$n.txt
done
CLUSTER_TESTS=0 DIST_TIMEOUT=200 STEP_TIMEOUT=200 DIST_JOBS="neighbors-warm" bash scripts/gpu-run.sh $out/nw4 cluster > $out/nw4.txt 2>&1
echo "neighbors-warm 4: exit $?"; grep -E "batch of|queries/s|agree" $out/nw4.txt | cut -c1-220 | head -30
