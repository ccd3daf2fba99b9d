#!/usr/bin/env bash
# Call 83 (2026-11-29, 1 x H200): the review's fixes: the wide kernel launched first on the
# copies' stream and the narrow kernel on a stream that waits for the copies (the wide
# blocks usually reach their multiprocessors first); no dead one-word-a-lane path; the
# test reaches 256- and 512-word bands (unrelated texts of 12,000 and 20,000 bytes) and
# uses each warp's table again (200 short pairs). The dedup tests, GPU ones included;
# compute-sanitizer memcheck of the verification tests (quick shapes); the pipeline at
# 20,000 documents before (XP_NARROW_ONLY=1, xp_bench_dedup from this code) and now,
# alternated twice, one rep each.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp83.tar.xz
timeout 240 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
grep -E "^\[       OK \] GpuVerify" $out/dedup_tests.log
SIMKIT_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests --gtest_filter='GpuVerify.*' > $out/memcheck_verify.log 2>&1
echo "memcheck GpuVerify.* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck_verify.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
for r in 1 2; do
  XP_NARROW_ONLY=1 timeout 100 .gpu/xp_bench_dedup $b > $out/bench_before_$r.log 2>&1
  timeout 100 $st/bin/simkit_bench_dedup $b > $out/bench_new_$r.log 2>&1
  for w in before new; do
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*' | tr '\n' ' ')"
  done
done
