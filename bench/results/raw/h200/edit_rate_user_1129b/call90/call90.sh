#!/usr/bin/env bash
# Call 90 (2026-11-29, 1 x H200): an experiment's build (xp90/: the candidates' blocks
# in one launch, with lines on stderr timing the candidate stage's parts and the
# verification's two kernels apart) with three ways of placing the wide verification
# kernel's blocks before the narrow kernel's (SIMKIT_XP_ORDER): priority (the stream's
# priority, as now), event (the narrow kernel waits for a programmatic event that every
# wide block triggers at its start) and spin (the host launches the narrow kernel once
# every wide block has counted itself in mapped memory), alternated 3 times each in the
# pipeline at 20,000 documents (one run of --reps 3 each), and in whole commands twice.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/xp90.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
export SIMKIT_XP_TRACE=1
for r in 1 2 3; do
  for o in priority event spin; do
    SIMKIT_XP_ORDER=$o timeout 100 .gpu/xp90/simkit_bench_dedup $b > $out/bench_${o}_$r.log 2>&1
    echo "bench $o $r: $(grep 'bench: edit rate' $out/bench_${o}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"gpu_kernel_ms":[0-9.]*' | tr '\n' ' ')"
    grep "xp verify" $out/bench_${o}_$r.log | tail -3 | sed 's/: d<=63.*//'
  done
done
grep "xp spin" $out/bench_spin_1.log | sort | uniq -c
grep "xp candidates" $out/bench_priority_1.log | tail -4
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-400)"
  grep "xp verify" $out/$1.log | tail -1 | sed 's/: d<=63.*//'
}
for r in 1 2; do
  for o in priority event spin; do
    SIMKIT_XP_ORDER=$o run ${o}_cuda_$r .gpu/xp90/simkit cuda
  done
done
grep "xp candidates" $out/spin_cuda_2.log
for f in event_cuda_1 spin_cuda_1 priority_cuda_2 event_cuda_2 spin_cuda_2; do
  cmp -s "$data/priority_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
tar -C $out -czf $final/logs.tgz .
