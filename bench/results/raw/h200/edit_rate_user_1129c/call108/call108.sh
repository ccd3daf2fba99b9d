#!/usr/bin/env bash
# Call 108 (2026-11-29, 1 x H200): the wide bands' function kept out of line
# (__noinline__: ptxas then spills nothing in its 2-, 4- and 8-word-a-lane forms, where the
# inlined kernel spilled 704 bytes) against the final code (c108/: 909a6f5's build).
# - the GPU verification and edit-rate tests;
# - the pipeline at 20,000 documents, alternated three times.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c108.tar.xz
timeout 200 $st/bin/simkit_dedup_tests --gtest_filter='GpuVerify.*:GpuDedup.*:EditRate.*' > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests GpuVerify, GpuDedup, EditRate: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
for r in 1 2 3; do
  for w in c108 final; do
    bin=$([ $w = c108 ] && echo .gpu/c108/simkit_bench_dedup || echo $st/bin/simkit_bench_dedup)
    timeout 100 $bin --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 \
      --device cuda --no-cpu-pipeline --reps 3 > $out/bench_${w}_$r.log 2>&1
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*\|"gpu_verify_detail":{[^}]*}' | tr '\n' ' ')"
  done
done
tar -C $out -czf $final/logs.tgz .
