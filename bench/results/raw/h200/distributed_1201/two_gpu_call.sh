#!/usr/bin/env bash
# The two-GPU call this session could not make (the kind was not lent), for the next one:
# bench/distributed.sh's dedup and dedup-every jobs twice
# (a million hashes: the index, and every pair scored under --memory-budget 1G, on one
# GPU, cuda:all and mpirun -np 2; outputs compared byte for byte).
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null)" | tee $final/summary.txt
export DIST_DATA=$(mktemp -d)  # the list made once, for both runs
for run in 1 2; do
  CLUSTER_TESTS=0 DIST_JOBS="dedup dedup-every" DIST_TIMEOUT=280 timeout 290 bash scripts/gpu-run.sh $final/run$run cluster > $final/run$run.txt 2>&1
  echo "run $run:" | tee -a $final/summary.txt
  grep '^dedup\|^== ' $final/run$run.txt | tee -a $final/summary.txt
done
rm -rf $DIST_DATA
