#!/usr/bin/env bash
# Call 21 (commits 67bf3ce, 2de1c43): postings' GPU tables on one core with a list table on
# the device and answers down in pieces; the CPU's answers kept in a reused Results; dedup's
# index planned once a process, matches packed on the device. GPU tests of postings and
# dedup (and memcheck of them), Brown three times, the synthetic shape, postings' whole
# command, dedup's million hashes (bench and the three ways), the whole cluster tests.
set -u
out=$1
. scripts/gpu-env.sh
nproc
for t in "simkit_postings_tests:*" "simkit_dedup_tests:*"; do
  bin=${t%%:*}; filter=${t#*:}
  timeout 200 $st/bin/$bin --gtest_filter="$filter" > $out/$bin.log 2>&1
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
    --device cuda --reps 41 --algorithms auto,simd --json $out/postings_brown_$r.json > $out/postings_brown_$r.log 2>&1
  echo "brown $r: exit $?"; grep -E "auto|CRoaring|flat|sliced" $out/postings_brown_$r.log | head -8
done
SIMKIT_POSTINGS_PHASES=1 timeout 60 $st/bin/simkit_bench_postings --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
  --device cuda --reps 11 --algorithms auto > $out/postings_phases.log 2>&1
grep "phases" $out/postings_phases.log | tail -4
timeout 120 $st/bin/simkit_bench_postings --synthetic --device cuda --reps 11 --algorithms auto --json $out/postings_synthetic.json > $out/postings_synthetic.log 2>&1
echo "synthetic: exit $?"; grep -E "auto|CRoaring|flat|sliced" $out/postings_synthetic.log | head -8
for d in cuda cpu cuda cpu; do
  s=$(date +%s.%N); $st/bin/simkit postings query --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device $d --timings -q > $out/whole_postings_$d.txt 2> $out/whole_postings_$d.log
  echo "whole postings $d: exit $? $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}") s; $(grep -h timing $out/whole_postings_$d.log | tr '\n' '|')"
done
cmp $out/whole_postings_cuda.txt $out/whole_postings_cpu.txt && echo "whole postings: outputs equal"
rm -rf "$data"
# dedup: a million hashes made from the Boost headers' list.
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssd" --quiet
timeout 200 $st/bin/simkit_bench_dedup --device cuda --list "$data/boost.ssd" --synthetic 1000000 --json $out/dedup_gpu.json > $out/dedup_gpu.log 2>&1
echo "dedup bench: exit $?"; grep -E "synthetic" $out/dedup_gpu.log | head -20
rm -rf "$data"
CLUSTER_TESTS=0 DIST_TIMEOUT=300 DIST_JOBS="dedup" bash scripts/gpu-run.sh $out/dist cluster > $out/dist.txt 2>&1
echo "dedup three ways: exit $?"; grep -E "^dedup" $out/dist.txt | head -6
CLUSTER_TESTS=0 DIST_TIMEOUT=300 DIST_JOBS="dedup" bash scripts/gpu-run.sh $out/dist2 cluster > $out/dist2.txt 2>&1
echo "dedup three ways again: exit $?"; grep -E "^dedup" $out/dist2.txt | head -6
CLUSTER_BENCH=0 STEP_TIMEOUT=200 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
