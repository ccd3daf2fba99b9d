#!/usr/bin/env bash
# Call 84 (2026-11-29, 1 x H200): what a user waits for in `simkit dedup --mode edit-rate`.
# New: the rate signatures' pass computes 8 positions' rolling hashes side by side
# (AVX2), the piece hashes in a 16-bit register vector; every document in memory goes to
# the GPU while the candidates are looked for (gathered through pinned buffers); the
# command signs the documents while the GPU's driver starts. Before: a build of commit
# 63d1446 (head63d/: simkit, simkit_bench_dedup). The dedup tests (GPU ones included);
# compute-sanitizer memcheck of the verification tests and the GPU pipeline test (quick
# shapes); the pipeline at 20,000 documents (Boost headers and edited copies), before
# and new alternated twice; whole commands before and new alternated three times;
# outputs compared.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/head63d.tar.xz
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
grep -E "^\[       OK \] (GpuVerify|GpuDedup.EditRate|EditRate.Devices|Ctph.Rate)" $out/dedup_tests.log
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuVerify.*:GpuDedup.EditRate*' > $out/memcheck.log 2>&1
echo "memcheck GpuVerify.*:GpuDedup.EditRate* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
for r in 1 2; do
  timeout 100 .gpu/head63d/simkit_bench_dedup $b > $out/bench_before_$r.log 2>&1
  timeout 100 $st/bin/simkit_bench_dedup $b > $out/bench_new_$r.log 2>&1
  for w in before new; do
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*' | tr '\n' ' ')"
  done
done
echo "documents: $(find $data/boost $data/copies -type f | wc -l)"
run() {  # NAME BIN
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-520)"
}
for r in 1 2 3; do
  run before_cuda_$r .gpu/head63d/simkit
  run new_cuda_$r $st/bin/simkit
done
for f in new_cuda_1 before_cuda_2 new_cuda_2 before_cuda_3 new_cuda_3; do
  cmp -s "$data/before_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
