#!/usr/bin/env bash
# Call 158 (2026-11-30, 1 x H200): call 154's four ways on a million hashes again (a second call, for medians); no tests.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
export PATH=$st/bin:$PATH
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic ${HASHES:-1000000} --write-list "$data/h.ssdeep" > /dev/null 2>&1
run() {  # name, then simkit dedup's options
  local name=$1; shift
  local s0=$(date +%s.%N)
  timeout 200 simkit dedup $data/h.ssdeep "$@" --timings --quiet -o $data/o_$name.tsv 2> $final/$name.log
  echo "$name: exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") s; $(grep -h 'GPU.s 7-gram\|timing: matched\|in all' $final/$name.log | sed 's/simkit: timing: //;s/simkit: //' | tr '\n' ' ')"
}
{
  run index --device cuda
  run every_pair --device cuda --memory-budget 1M
  run auto_no_room --device auto --memory-budget 1M
  run cpu --device cpu
  for n in every_pair auto_no_room cpu; do
    cmp -s $data/o_index.tsv $data/o_$n.tsv && echo "$n equals index: $(wc -l < $data/o_$n.tsv) lines" || echo "$n DIFFERS from index"
  done
} | tee $final/summary.txt
rm -rf $data
