#!/usr/bin/env bash
# Call 140 (2026-11-30, 2 x H200): 03c939a (the review's mends: the spread's fallback kept
# its waiting matches, the page-locking helpers leave the chosen GPU current): the dedup GPU tests, then dedup (300,000 hashes) and
# disco similar --all (30,000 words) on cuda:0 and cuda:all, outputs compared.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh
export PATH=$st/bin:$PATH
timeout 100 $st/bin/simkit_dedup_tests > $final/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $final/dedup_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $final/dedup_tests.log) failed"
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 300000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
simkit_bench_disco --sizes 30000 --features 10000 --write-model $data/d.skd > /dev/null 2>&1
for dev in cuda:0 cuda:all; do
  simkit dedup $data/h.ssdeep --device $dev --timings --quiet -o $data/dedup_$dev.tsv 2>&1 | grep -E "planned|matched" | tee -a $final/timings.txt
  simkit disco similar --all --model $data/d.skd --features 10000 --k 10 --precision tf32 --kernel cublas --device $dev \
    --timings --quiet -o $data/disco_$dev.tsv 2>&1 | grep -E "locked|all pairs" | tee -a $final/timings.txt
done
for j in dedup disco; do cmp -s $data/${j}_cuda:0.tsv $data/${j}_cuda:all.tsv && echo "$j outputs equal: $(wc -l < $data/${j}_cuda:0.tsv) lines" || echo "$j outputs DIFFER"; done | tee -a $final/timings.txt
rm -rf $data
