#!/usr/bin/env bash
# Call 136 (2026-11-30, 2 x H200): dedup's spread with every GPU buffer made before the
# answer's pages are faulted in (this code) against a variant that also page-locks the
# answer for the copies down; the GPU dedup tests first; two million and a million hashes,
# cuda:0 and cuda:all, outputs compared; then bench/distributed.sh's dedup and disco.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/bins.tar.xz
export PATH=$st/bin:$PATH
for t in simkit_dedup_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep -B8 '^\[  FAILED  \] .*(' $out/$t.log | head -30
done
data=$(mktemp -d)
bin_of() { case $1 in variant) echo .gpu/variant/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
run() {  # SIZE WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $2) dedup "$data/h$1.ssdeep" --device $3 --timings --quiet -o "$data/$4.tsv" 2> $out/$4.log)
  echo "dedup $1 $3 $2 ($4): $t s; $(grep -h timing $out/$4.log | sed 's/^simkit: timing: //' | grep -E 'matched|in all' | tr '\n' ' ')"
  echo "   $(grep -h 'matches spread\|range of GPU' $out/$4.log | sed 's/dedup: //' | tr '\n' ';')"
  if [ "$4" != "${1}_n1_1" ]; then cmp -s "$data/${1}_n1_1.tsv" "$data/$4.tsv" || echo "$4 DIFFERS"; rm -f "$data/$4.tsv"; fi
}
for size in 2000000 1000000; do
  $st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic $size --write-list "$data/h$size.ssdeep" > /dev/null 2>&1
  run $size now cuda:0 ${size}_n1_1
  for r in 1 2 3; do run $size now cuda:all ${size}_n2_$r; run $size variant cuda:all ${size}_v2_$r; done
  run $size now cuda:0 ${size}_n1_2
  rm -f $data/${size}_n1_1.tsv
done
tar -C $out -czf $final/logs.tgz .
rm -rf $data
CLUSTER_TESTS=0 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -8
