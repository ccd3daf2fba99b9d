#!/usr/bin/env bash
# Call 106 (2026-11-29, 1 x H200): this session's code (deferral, host work on every
# core, output slices by the item count) against 41f1c06 (c100/) and the session's start
# (h98/: 9869782):
# - the dedup tests;
# - the pipeline at 20,000 documents, the three builds alternated three times;
# - the whole edit-rate command on the GPU (three times) and the CPU (once), alternated;
#   outputs compared;
# - `simkit devices` (the driver's start alone), three times.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c100.tar.xz
tar -C .gpu -xJf .gpu/h98.tar.xz
timeout 200 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -30
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
bin_of() { case $1 in h98) echo .gpu/h98/$2 ;; c100) echo .gpu/c100/$2 ;; *) echo $st/bin/$2 ;; esac; }
for r in 1 2 3; do
  for w in h98 c100 final; do
    timeout 100 $(bin_of $w simkit_bench_dedup) --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 \
      --device cuda --no-cpu-pipeline --reps 3 > $out/bench_${w}_$r.log 2>&1
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*\|"gpu_verify_detail":{[^}]*}' | tr '\n' ' ')"
  done
done
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
for d in cuda cpu; do
  for r in 1 2 3; do
    [ $d = cpu ] && [ $r = 2 ] && break
    for w in h98 c100 final; do
      t=$(wall $(bin_of $w simkit) dedup --mode edit-rate "$data/boost" "$data/copies" --device $d --timings --quiet -o "$data/${w}_$d$r.tsv" 2> $out/${w}_$d$r.log)
      echo "dedup $d $w $r: $t s; $(grep -h timing $out/${w}_$d$r.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
    done
  done
done
for f in c100_cuda1 final_cuda1 h98_cuda2 c100_cuda2 final_cuda2 h98_cuda3 c100_cuda3 final_cuda3 h98_cpu1 c100_cpu1 final_cpu1; do
  cmp -s "$data/h98_cuda1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"
done
echo "outputs compared: $(wc -l < $data/h98_cuda1.tsv) lines"
for r in 1 2 3; do echo "simkit devices $r: $(wall $st/bin/simkit devices > $out/devices.txt 2>&1) s"; done
head -3 $out/devices.txt
tar -C $out -czf $final/logs.tgz .
