#!/usr/bin/env bash
# Call 91 (2026-11-29, 1 x H200): an experiment's build (xp91/) of the verification's
# lower bound from the pairs' byte counts (SIMKIT_XP_BOUND: pairs refuted before any
# band, bands narrower than the bound skipped), with the wide kernel's blocks placed by
# the host's wait (SIMKIT_XP_ORDER=spin) and its share of the multiprocessors
# (SIMKIT_XP_WIDE_DIV: a quarter, a sixth, an eighth). The dedup tests with the bound on;
# memcheck of the verification tests; the pipeline at 20,000 documents, configurations
# alternated twice; whole commands twice.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp91.tar.xz
timeout 300 .gpu/xp91/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests (xp91, bound on): exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
SIMKIT_XP_ORDER=spin SIMKIT_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/xp91/simkit_dedup_tests \
  --gtest_filter='GpuVerify.*:GpuDedup.EditRate*' > $out/memcheck.log 2>&1
echo "memcheck GpuVerify.*:GpuDedup.EditRate* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
export SIMKIT_XP_TRACE=1 SIMKIT_XP_ORDER=spin
for r in 1 2; do
  for c in "0 4" "1 4" "1 6" "1 8"; do
    set -- $c
    n=b$1_d$2_$r
    SIMKIT_XP_BOUND=$1 SIMKIT_XP_WIDE_DIV=$2 timeout 100 .gpu/xp91/simkit_bench_dedup $b > $out/bench_$n.log 2>&1
    echo "bench $n: $(grep 'bench: edit rate' $out/bench_$n.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*' | tr '\n' ' ')"
    grep "xp verify" $out/bench_$n.log | tail -3 | sed 's/: d<=63.*//'
    grep "xp bound" $out/bench_$n.log | tail -2 | uniq -c
  done
done
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-400)"
  grep "xp verify" $out/$1.log | tail -1 | sed 's/: d<=63.*//'
}
for r in 1 2; do
  SIMKIT_XP_BOUND=0 run b0_cuda_$r .gpu/xp91/simkit cuda
  SIMKIT_XP_BOUND=1 run b1_cuda_$r .gpu/xp91/simkit cuda
done
for f in b1_cuda_1 b0_cuda_2 b1_cuda_2; do
  cmp -s "$data/b0_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
tar -C $out -czf $final/logs.tgz .
