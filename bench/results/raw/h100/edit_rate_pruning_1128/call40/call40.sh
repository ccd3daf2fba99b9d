#!/usr/bin/env bash
# Call 40 (2026-11-28, 1 x H100, 16 cores): edit-rate signature pairs pruned by the
# documents' lengths. The dedup tests (GPU ones included) with the new code; then
# simkit_bench_dedup's GPU pipeline at 20,000 documents scoring every pair (the code
# before: --score-every-pair) against pruning with runs of 512 .. 4,096 rows a GPU call
# (XP_RUN_ROWS, an experiment's knob; the commit fixes one), alternated twice; then the
# CPU pipeline (16 cores) once each way.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call40_bins.tar.xz
export LD_LIBRARY_PATH=$PWD/.gpu:$LD_LIBRARY_PATH
timeout 400 .gpu/final_simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/dedup_tests.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep "^\[  FAILED" $out/dedup_tests.log | head -5
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b=".gpu/xp_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 2000"
for r in 1 2; do for rows in every 512 1024 2048 4096; do
  flag=""; [ $rows = every ] && flag=--score-every-pair
  XP_RUN_ROWS=$rows timeout 200 $b --device cuda --no-cpu-pipeline --reps 3 $flag > $out/gpu_${rows}_$r.log 2>&1
  echo "gpu $r $rows: $(grep 'bench: edit rate' $out/gpu_${rows}_$r.log | grep -o '"candidates":[0-9]*\|"gpu_kernel_ms":[0-9.]*\|"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*' | tr '\n' ' ')"
done; done
for flag in "" --score-every-pair; do
  timeout 200 $b --device cpu --reps 1 $flag > $out/cpu_$flag.log 2>&1
  echo "cpu ${flag:-pruned}: $(grep 'bench: edit rate' $out/cpu_$flag.log | grep -o '"candidates":[0-9]*\|"cpu_s":[0-9.]*\|"cpu_stages_s":\[[^]]*\]\|"pairs_found":[0-9]*' | tr '\n' ' ')"
done
