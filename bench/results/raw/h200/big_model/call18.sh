#!/usr/bin/env bash
# Call 18: a model larger than one GPU's memory (issue 29): 70,000,000 x 300 fp32 (84 GB)
# on one GPU (streamed), cuda:all and mpirun -np 2 (each GPU half the model, resident).
# Call 19 ran these lines again (as .gpu/call19.sh, its grep also showing "checksum"),
# on commit 7633d8d, where bench/distributed.sh also times the checksum both ways.
set -u
out=$1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; free -g | head -2; df -h /dev/shm /tmp | tail -2
avail=$(df --output=avail -B1 /dev/shm | tail -1)
if (( avail > 95 * 1000 * 1000 * 1000 )); then export DIST_DATA=/dev/shm/simkit-big; else export DIST_DATA=$(mktemp -d); fi
mkdir -p "$DIST_DATA"; echo "data in $DIST_DATA"
CLUSTER_TESTS=0 DIST_TIMEOUT=530 DIST_JOBS="big" bash scripts/gpu-run.sh $out/run cluster > $out/run.txt 2>&1
echo "gpu-run: exit $?"
grep -E "^big|big model|exit" $out/run.txt $out/run/distributed.txt 2>/dev/null | head -30
rm -rf "$DIST_DATA"
