#!/usr/bin/env bash
# Call 96 (2026-11-29, 1 x H200): the folders listed on every core (w96/: a build of
# 76119ab) against f7719f6 (the staged build): the whole
# edit-rate command at 20,000 documents, three runs each alternated, and `simkit hash -r`
# of the Boost headers, three runs each; outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/w96.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
timeout 100 $st/bin/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 1 > $out/bench.log 2>&1
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-600)"
}
for r in 1 2 3; do
  run before_cuda_$r $st/bin/simkit cuda
  run walk_cuda_$r .gpu/w96/simkit cuda
done
for f in walk_cuda_1 before_cuda_2 walk_cuda_2 before_cuda_3 walk_cuda_3; do
  cmp -s "$data/before_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
for r in 1 2 3; do
  for w in before walk; do
    bin=$([ $w = before ] && echo $st/bin/simkit || echo .gpu/w96/simkit)
    s0=$(date +%s.%N)
    $bin hash -r "$data/boost" -o $out/hash_$w.txt
    echo "hash -r boost $w $r: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s"
  done
done
cmp -s $out/hash_before.txt $out/hash_walk.txt && echo "hash lists equal ($(wc -l < $out/hash_walk.txt) lines)" || echo "hash lists DIFFER"
rm -f $out/hash_*.txt
tar -C $out -czf $final/logs.tgz .
