#!/usr/bin/env bash
# Call 74 (2026-11-29, 1 x H200): call 73 again after its fixes (the wide kernel's table slots
# a warp of every block: memcheck found the last block's odd warp past them; the table's
# words loaded a character ahead; the verification's time split in --timings). The
# edit-rate verification's wide bands on the GPU
# (limits past 2,047 edits: bands of up to 512 words, 16 a lane, masks from a table of the
# pattern's). The dedup tests (GPU ones included); compute-sanitizer memcheck of the
# verification tests (quick shapes); then simkit_bench_dedup's GPU pipeline at 20,000
# documents (Boost headers and edited copies), the routing before (XP_NARROW_ONLY=1: the
# cores take every limit past 2,047 and every pair of 64 KB or more, an experiment's knob
# in xp_bench_dedup, built from this code) against the new one, alternated three times;
# then whole `simkit dedup --mode edit-rate` commands both ways, alternated twice;
# outputs compared.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp74.tar.xz
timeout 300 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
grep -E "^\[       OK \] GpuVerify" $out/dedup_tests.log
SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests --gtest_filter='GpuVerify.*' > $out/memcheck_verify.log 2>&1
echo "memcheck GpuVerify.* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck_verify.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 2000 --device cuda --no-cpu-pipeline --reps 3"
for r in 1 2 3; do
  XP_NARROW_ONLY=1 timeout 200 .gpu/xp_bench_dedup $b > $out/bench_before_$r.log 2>&1
  timeout 200 .gpu/xp_bench_dedup $b > $out/bench_new_$r.log 2>&1
  for w in before new; do
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"candidates":[0-9]*\|"gpu_kernel_ms":[0-9.]*\|"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*' | tr '\n' ' ')"
  done
done
echo "documents: $(find $data/boost $data/copies -type f | wc -l)"
run() {  # NAME BIN DEVICE [XP]
  local start=$(date +%s.%N)
  env $4 timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-420)"
}
for r in 1 2; do run before_cuda_$r .gpu/xp_simkit cuda XP_NARROW_ONLY=1; run final_cuda_$r $st/bin/simkit cuda X=1; done
run final_cpu $st/bin/simkit cpu X=1
for f in final_cuda_1 before_cuda_2 final_cuda_2 final_cpu; do cmp -s "$data/before_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"; done
tail -c 400 $out/memcheck_verify.log
