#!/usr/bin/env bash
# Call 92 (2026-11-29, 1 x H200): the final code of this session (the candidates' blocks
# in one launch a filter; the verification's bound from byte counts; the wide blocks
# started before the narrow kernel is launched) against the code before it (c88/: a build
# of 4420ecb's code). The dedup tests; compute-sanitizer memcheck of the GPU pair,
# verification and pipeline tests and racecheck of the verification's (quick shapes); the
# pipeline at 20,000 documents alternated three times; whole commands on the GPU alternated
# three times, on the CPU once each; outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c88.tar.xz
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
SIMKIT_TEST_QUICK=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuEditPairs.*:GpuVerify.*:GpuDedup.EditRate*' > $out/memcheck.log 2>&1
echo "memcheck GpuEditPairs.*:GpuVerify.*:GpuDedup.EditRate* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuVerify.DistancesEqualTheReference:GpuVerify.PairsAtTheirByteCountsBound' > $out/racecheck.log 2>&1
echo "racecheck GpuVerify (quick): exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $out/racecheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
for r in 1 2 3; do
  for w in c88 final; do
    bin=$([ $w = c88 ] && echo .gpu/c88/simkit_bench_dedup || echo $st/bin/simkit_bench_dedup)
    timeout 100 $bin $b > $out/bench_${w}_$r.log 2>&1
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*\|"gpu_kernel_ms":[0-9.]*' | tr '\n' ' ')"
  done
done
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-520)"
}
for r in 1 2 3; do
  run c88_cuda_$r .gpu/c88/simkit cuda
  run final_cuda_$r $st/bin/simkit cuda
done
run c88_cpu .gpu/c88/simkit cpu
run final_cpu $st/bin/simkit cpu
for f in final_cuda_1 c88_cuda_2 final_cuda_2 c88_cuda_3 final_cuda_3 c88_cpu final_cpu; do
  cmp -s "$data/c88_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
tar -C $out -czf $final/logs.tgz .
