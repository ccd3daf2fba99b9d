#!/usr/bin/env bash
# Call 23 (commit 8034f37, the final code of this change): postings' and dedup's GPU tests
# (memcheck of both), Brown three times and the synthetic shape, postings' whole command;
# dedup's million hashes: the bench (steps) and the three ways twice, with the commands'
# timing lines; the whole cluster tests.
set -u
out=$1
. scripts/gpu-env.sh
nproc
for bin in simkit_postings_tests simkit_dedup_tests; do
  timeout 200 $st/bin/$bin > $out/$bin.log 2>&1
  echo "$bin: exit $? $(grep -c "^\[       OK" $out/$bin.log) passed $(grep -c "^\[  SKIPPED \] .*(" $out/$bin.log) skipped $(grep -c "^\[  FAILED  \] .*(" $out/$bin.log) failed"
  grep -A6 ': Failure$' $out/$bin.log | head -20
done
for t in "simkit_postings_tests:*Gpu*" "simkit_dedup_tests:GpuDedup*"; do
  bin=${t%%:*}; filter=${t#*:}
  timeout 200 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $st/bin/$bin --gtest_filter="$filter" > $out/memcheck_$bin.log 2>&1
  echo "memcheck $bin: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck_$bin.log | tail -1)"
done
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/postings.tar.xz
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for r in 1 2 3; do
  timeout 120 $st/bin/simkit_bench_postings --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
    --device cuda --reps 41 --algorithms auto --json $out/postings_brown_$r.json > $out/postings_brown_$r.log 2>&1
  echo "brown $r: $(grep -E "auto|CRoaring|_explicit|_managed" $out/postings_brown_$r.log | sed 's/  */ /g' | cut -c8-75 | tr '\n' '|')"
done
timeout 120 $st/bin/simkit_bench_postings --synthetic --device cuda --reps 11 --algorithms auto --json $out/postings_synthetic.json > $out/postings_synthetic.log 2>&1
echo "synthetic: $(grep -E "auto|CRoaring|flat_explicit" $out/postings_synthetic.log | sed 's/  */ /g' | cut -c8-75 | tr '\n' '|')"
for d in cuda cpu cuda cpu; do
  s=$(date +%s.%N); $st/bin/simkit postings query --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device $d --timings -q > $out/whole_postings_$d.txt 2> $out/whole_postings_$d.log
  echo "whole postings $d: exit $? $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}") s; $(grep -h timing $out/whole_postings_$d.log | cut -c16- | tr '\n' '|')"
done
cmp $out/whole_postings_cuda.txt $out/whole_postings_cpu.txt && echo "whole postings: outputs equal"
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
  for w in one all mpi; do echo "  $w: $(grep -h timing $out/dist$r/logs/distributed/dedup_$w.log | cut -c16- | tr '\n' '|')"; done
done
CLUSTER_BENCH=0 STEP_TIMEOUT=200 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
