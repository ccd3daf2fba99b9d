#!/usr/bin/env bash
# Call 171 (2026-12-01, 2 x H200, the final code 803e67a): bench/distributed.sh's dedup and
# dedup-every jobs once (a million hashes: the index, and every pair scored under
# --memory-budget 1G, on one GPU, cuda:all and mpirun -np 2; outputs compared byte for
# byte, and every pair's with the index's). The session's last 295 s of device time.
set -u
final=$1
mkdir -p $final
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null)" | tee $final/summary.txt
CLUSTER_TESTS=0 DIST_JOBS="dedup dedup-every" DIST_TIMEOUT=200 timeout 210 bash scripts/gpu-run.sh $final/run cluster > $final/run.txt 2>&1
grep '^dedup\|^== ' $final/run.txt | tee -a $final/summary.txt
tar -C $final/run/logs -czf $final/logs.tgz distributed 2>/dev/null
rm -rf $final/run/logs
