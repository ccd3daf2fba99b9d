#!/usr/bin/env bash
# Call 169 (2026-12-01, 1 x H200): the final kernel (09d3956): dedup every pair at a million
# hashes whole and in 2, then 4, shares one after another (simkit_bench_dedup
# --every-pair-shares): the split's balance on this code, for two GPUs and for four.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null)" | tee $final/summary.txt
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
for n in 2 4; do
  timeout 250 simkit_bench_dedup --device cuda --list "$data/boost.ssdeep" --synthetic 1000000 --every-pair-shares $n \
    --json $final/every_pair_shares_$n.json > /dev/null 2> $data/shares_$n.log
  echo "shares $n: exit $?" >> $final/summary.txt
  grep '^bench: every\|^bench: share\|^bench: the shares' $data/shares_$n.log | tee -a $final/summary.txt
done
rm -rf $data
