#!/usr/bin/env bash
# Call 89 (2026-11-29, 1 x H200): the candidates' blocks in one launch a filter (the new
# build) against the code before (c88/: a build of 4420ecb's code). The dedup tests;
# compute-sanitizer memcheck of the pair and pipeline tests (quick shapes); the pipeline
# at 20,000 documents alternated twice, and an experiment's build of the new code (xp89/:
# the verification's kernels timed apart, a line on stderr) once; whole commands on the
# GPU alternated three times and on the CPU once each; outputs compared.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c88.tar.xz
tar -C .gpu -xJf .gpu/xp89.tar.xz
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuEditPairs.*:GpuDedup.EditRate*' > $out/memcheck.log 2>&1
echo "memcheck GpuEditPairs.*:GpuDedup.EditRate* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
show() { echo "bench $1: $(grep 'bench: edit rate' $out/bench_$1.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*\|"gpu_kernel_ms":[0-9.]*' | tr '\n' ' ')"; }
for r in 1 2; do
  timeout 100 .gpu/c88/simkit_bench_dedup $b > $out/bench_c88_$r.log 2>&1; show c88_$r
  timeout 100 $st/bin/simkit_bench_dedup $b > $out/bench_new_$r.log 2>&1; show new_$r
done
SIMKIT_XP_TRACE=1 timeout 100 .gpu/xp89/simkit_bench_dedup $b > $out/bench_xp_1.log 2>&1; show xp_1
grep "xp verify" $out/bench_xp_1.log | sort | uniq -c | sort -rn | head -4
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-520)"
}
for r in 1 2 3; do
  run c88_cuda_$r .gpu/c88/simkit cuda
  run new_cuda_$r $st/bin/simkit cuda
done
SIMKIT_XP_TRACE=1 run xp_cuda_1 .gpu/xp89/simkit cuda
grep "xp verify" $out/xp_cuda_1.log
run c88_cpu .gpu/c88/simkit cpu
run new_cpu $st/bin/simkit cpu
for f in new_cuda_1 c88_cuda_2 new_cuda_2 c88_cuda_3 new_cuda_3 xp_cuda_1 c88_cpu new_cpu; do
  cmp -s "$data/c88_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
