#!/usr/bin/env bash
# Call 24: the final code's figures again (commit 8034f37, the same stage as call 23):
# Brown three times, dedup's million hashes (bench, then the three ways twice).
set -u
out=$1
. scripts/gpu-env.sh
nproc
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/postings.tar.xz
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for r in 1 2 3; do
  timeout 120 $st/bin/simkit_bench_postings --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
    --device cuda --reps 41 --algorithms auto --json $out/postings_brown_$r.json > $out/postings_brown_$r.log 2>&1
  echo "brown $r: $(grep -E "auto|CRoaring|flat_" $out/postings_brown_$r.log | sed 's/  */ /g' | cut -c8-75 | tr '\n' '|')"
done
rm -rf "$data"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssd" --quiet
timeout 200 $st/bin/simkit_bench_dedup --device cuda --list "$data/boost.ssd" --synthetic 1000000 --json $out/dedup_gpu.json > $out/dedup_gpu.log 2>&1
echo "dedup bench: exit $?"; grep -E "synthetic" $out/dedup_gpu.log | head -12
rm -rf "$data"
for r in 1 2; do
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 DIST_JOBS="dedup" bash scripts/gpu-run.sh $out/dist$r cluster > $out/dist$r.txt 2>&1
  echo "dedup three ways, run $r: exit $?"; grep -E "^dedup" $out/dist$r.txt | head -4
done
