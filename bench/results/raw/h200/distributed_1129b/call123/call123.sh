#!/usr/bin/env bash
# Call 123 (2026-11-29, 2 x H200): the review's fixes (a dealt job's first GPU never
# skips, matches brought down before they pass the waiting limit, counts checked before
# CUB, dealing stopped on an error, long parts refused by encode): the GPU dedup tests,
# then the cluster tests (cuda:all and mpirun -np 2 against one GPU, every job).
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
t=simkit_dedup_tests
timeout 100 $st/bin/$t --gtest_filter='GpuDedup*:CtphMatch*' > $out/$t.log 2>&1
echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
grep -B8 '^\[  FAILED  \] .*(' $out/$t.log | head -30
tar -C $out -czf $final/logs.tgz .
STEP_TIMEOUT=160 CLUSTER_BENCH=0 bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -6
