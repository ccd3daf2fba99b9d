#!/usr/bin/env bash
# Call 88 (2026-11-29, 1 x H200): the final code (5e0a934: call 87's, the signatures' pass
# summing its lanes every 64 KiB) against the code before this session (head63d/: a build
# of 63d1446) and call 84's new build (c84/: a4f78c7). The dedup tests; compute-sanitizer
# memcheck of the verification and GPU pipeline tests (quick shapes); the pipeline at
# 20,000 documents, the three alternated twice; whole commands on the GPU alternated three
# times, and on the CPU once each (head and final); outputs compared.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp85.tar.xz
tar -C .gpu -xJf .gpu/head63d.tar.xz
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuVerify.*:GpuDedup.EditRate*' > $out/memcheck.log 2>&1
echo "memcheck GpuVerify.*:GpuDedup.EditRate* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
for r in 1 2; do
  timeout 100 .gpu/head63d/simkit_bench_dedup $b > $out/bench_head_$r.log 2>&1
  timeout 100 .gpu/c84/simkit_bench_dedup $b > $out/bench_c84_$r.log 2>&1
  timeout 100 $st/bin/simkit_bench_dedup $b > $out/bench_final_$r.log 2>&1
  for w in head c84 final; do
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*' | tr '\n' ' ')"
  done
done
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-520)"
}
for r in 1 2 3; do
  run head_cuda_$r .gpu/head63d/simkit cuda
  run c84_cuda_$r .gpu/c84/simkit cuda
  run final_cuda_$r $st/bin/simkit cuda
done
run head_cpu .gpu/head63d/simkit cpu
run final_cpu $st/bin/simkit cpu
for f in c84_cuda_1 final_cuda_1 head_cuda_2 c84_cuda_2 final_cuda_2 head_cuda_3 c84_cuda_3 final_cuda_3 head_cpu final_cpu; do
  cmp -s "$data/head_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
