#!/usr/bin/env bash
# Call 76 (2026-11-29, 1 x H200): one long pair's verification, one core against one warp
# (simkit_bench_dedup --long-pair: 100,000 random bytes and a copy with 3,000, 8,000 or
# 15,000 random edits, the limit of rate 0.1), the wide kernel as committed (bands up to 16
# words a lane) against a variant with at most 8 a lane (xp_bench_w8: no register spills;
# it cannot take 512 words, which these distances do not reach).
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp76.tar.xz
for e in 3000 8000 15000; do for v in w16 w8; do
  .gpu/xp_bench_$v --device cuda --long-pair 100000 --long-pair-edits $e --reps 3 > $out/long_${v}_$e.json 2> $out/long_${v}_$e.log
  echo "$v edits $e: $(grep 'long pair' $out/long_${v}_$e.log)"
done; done
