#!/usr/bin/env bash
# Call 44 (2026-11-28, 1 x H100, 16 cores): a second call for the signatures' vectorised pass
# (call 37's): whole `simkit dedup --mode edit-rate` commands on 20,000 documents with the
# stage's simkit (5bbdf9f: the pass before) against the final code, alternated three times
# on the GPU; the signature stage from --timings; outputs compared.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call37_bins.tar.xz
tar -C .gpu -xJf .gpu/call41_bins.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
.gpu/new_bench_dedup --device cuda --docs "$data/boost" --sizes 20000 --scratch "$data/copies" --no-cpu-pipeline --reps 1 --kernel-strings 100 > /dev/null 2>&1
run() {
  local name=$1; shift
  local start=$(date +%s.%N)
  timeout 200 "$@" --timings -q > /dev/null 2> $out/$name.log
  echo "$name: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $?; $(grep -h timing $out/$name.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-200)"
}
for r in 1 2 3; do
  run old_$r $st/bin/simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda -o "$data/o$r.tsv"
  run final_$r .gpu/final_simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda -o "$data/f$r.tsv"
done
for f in o2 o3 f1 f2 f3; do cmp -s "$data/o1.tsv" "$data/$f.tsv" && echo "$f equal" || echo "$f DIFFERS"; done
