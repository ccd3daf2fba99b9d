#!/usr/bin/env bash
# Call 142 (2026-11-30, 2 x H200): 6a811c6 (554a7b4 + PageLock no longer asks the driver to lock
# memory that is locked already (compute-sanitizer memcheck counted the refusals as API
# errors): the core GPU tests under memcheck; the cluster tests and bench/distributed.sh's
# dedup and disco; then dedup of three million hashes (167 M pairs) on cuda:0 and cuda:all,
# twice each, outputs compared (whether two GPUs gain at a larger size).
set -u
final=$1
mkdir -p $final
STEP_TIMEOUT=60 SAN_TIMEOUT=60 SAN_TESTS="simkit_core_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDeviceGuard.*:GpuPageLock.*:GpuStagedCopy.*' TEST_PROGRAMS="simkit_core_tests" \
  timeout 90 bash scripts/gpu-run.sh $final/core tests sanitize > $final/core.txt 2>&1
grep '^== ' $final/core.txt
STEP_TIMEOUT=150 DIST_TIMEOUT=150 DIST_JOBS="dedup disco" timeout 320 bash scripts/gpu-run.sh $final/cluster cluster > $final/cluster.txt 2>&1
tail -12 $final/cluster.txt
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
data=$(mktemp -d)
mkdir -p $data/boost $final/big
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 3000000 --write-list "$data/h.ssdeep" > /dev/null 2>&1
for r in 1 2; do
  for dev in cuda:0 cuda:all; do
    s0=$(date +%s.%N)
    SIMKIT_ENGINE_STATS=1 timeout 60 simkit dedup $data/h.ssdeep --device $dev --timings --quiet -o $data/o_$dev.tsv 2> $final/big/3M_${dev}_$r.log
    echo "3M $dev run $r: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'timing: matched\|in all' $final/big/3M_${dev}_$r.log | sed 's/simkit: timing: //' | tr '\n' ' ')"
  done
  cmp -s $data/o_cuda:0.tsv $data/o_cuda:all.tsv && echo "run $r outputs equal: $(wc -l < $data/o_cuda:0.tsv) lines" || echo "run $r outputs DIFFER"
done | tee $final/big/summary.txt
rm -rf $data
