#!/usr/bin/env bash
# Call 102 (2026-11-29, 1 x H200): narrow pairs past 4 words deferred to the table kernel
# (verify_pairs.cu) against the code before (c100/: a build of 41f1c06).
# - the dedup tests; memcheck and racecheck of GpuVerify.* (quick shapes);
# - the pipeline at 20,000 documents, alternated three times;
# - the whole edit-rate command on the GPU, alternated twice; outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c100.tar.xz
timeout 200 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
grep -E "^\[       OK \] GpuVerify" $out/dedup_tests.log
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuVerify.*' > $out/memcheck.log 2>&1
echo "memcheck GpuVerify.* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuVerify.NarrowLimits*' > $out/racecheck.log 2>&1
echo "racecheck GpuVerify.NarrowLimits* (quick): exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $out/racecheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
for r in 1 2 3; do
  for w in c100 final; do
    bin=$([ $w = c100 ] && echo .gpu/c100/simkit_bench_dedup || echo $st/bin/simkit_bench_dedup)
    timeout 100 $bin --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 \
      --device cuda --no-cpu-pipeline --reps 3 > $out/bench_${w}_$r.log 2>&1
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*\|"gpu_verify_detail":{[^}]*}' | tr '\n' ' ')"
  done
done
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
for r in 1 2; do
  for w in c100 final; do
    bin=$([ $w = c100 ] && echo .gpu/c100/simkit || echo $st/bin/simkit)
    t=$(wall $bin dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda --timings --quiet -o "$data/${w}_$r.tsv" 2> $out/${w}_cmd$r.log)
    echo "dedup cuda $w $r: $t s; $(grep -h timing $out/${w}_cmd$r.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
  done
done
for f in final_1 c100_2 final_2; do
  cmp -s "$data/c100_1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"
done
echo "outputs compared: $(wc -l < $data/c100_1.tsv) lines"
tar -C $out -czf $final/logs.tgz .
