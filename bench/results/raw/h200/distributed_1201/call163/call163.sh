#!/usr/bin/env bash
# Call 163 (2026-12-01): dedup's every-pair path (the path a list takes where the GPU's
# 7-gram index has no room) at a million hashes: on one GPU, whole and in two shares one
# after another (simkit_bench_dedup --every-pair-shares: the balance of the split); on two
# GPUs, bench/distributed.sh's dedup and dedup-every jobs (one GPU, cuda:all, mpirun -np 2).
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
gpus=$(nvidia-smi -L | wc -l)
echo "GPUs: $gpus; commit $(cat .gpu/commit 2>/dev/null)" | tee $final/summary.txt
if [ "$gpus" -ge 2 ]; then
  CLUSTER_TESTS=0 DIST_JOBS="dedup dedup-every" DIST_TIMEOUT=400 timeout 430 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
  grep '^== \|^|\|dedup' $final/cluster.txt | tail -20 | tee -a $final/summary.txt
  rm -rf $final/cluster/distributed/*/ 2>/dev/null
else
  data=$(mktemp -d)
  mkdir -p $data/boost
  tar -C "$data/boost" -xJf .gpu/boost.tar.xz
  simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
  timeout 300 simkit_bench_dedup --device cuda --list "$data/boost.ssdeep" --synthetic 1000000 --every-pair-shares 2 \
    --json $final/every_pair_shares.json > /dev/null 2> $final/every_pair_shares.log
  echo "exit $?" >> $final/every_pair_shares.log
  grep '^bench:\|exit' $final/every_pair_shares.log | tee -a $final/summary.txt
  rm -rf $data
fi
