#!/usr/bin/env bash
# Call 124 (2026-11-29, 2 x H200): dedup's matches spread over the GPUs in ranges of
# (a, b), each GPU sorting its range and copying it down into its place at once (in
# place of the gather on the first GPU), and the plan's key count used for the fit check:
# the GPU dedup tests, then a million hashes, df7e5ef's simkit (base) against this code,
# cuda:0 and cuda:all alternated, engine phases printed, outputs compared; then the
# cluster tests and bench/distributed.sh's dedup and disco.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/base.tar.xz
export PATH=$st/bin:$PATH
t=simkit_dedup_tests
timeout 150 $st/bin/$t > $out/$t.log 2>&1
echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
grep -B8 '^\[  FAILED  \] .*(' $out/$t.log | head -30
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
$st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/hashes.ssdeep" > /dev/null 2>&1
bin_of() { case $1 in base) echo .gpu/base/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
run() {  # WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $1) dedup "$data/hashes.ssdeep" --device $2 --timings --quiet -o "$data/$3.tsv" 2> $out/$3.log)
  echo "dedup $2 $1 ($3): $t s; $(grep -h timing $out/$3.log | sed 's/^simkit: timing: //' | grep -E 'matched|in all' | tr '\n' ' ')"
}
for r in 1 2 3; do
  run base cuda:0 b1_$r; run now cuda:0 n1_$r; run base cuda:all b2_$r; run now cuda:all n2_$r
done
for r in 1 2 3; do for f in n1_$r b2_$r n2_$r b1_$r; do cmp -s "$data/b1_1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"; done; done
echo "outputs compared: $(wc -l < $data/b1_1.tsv) lines"
echo "--- engine phases, now cuda:all run 2:"; grep -v timing $out/n2_2.log | tail -22
echo "--- engine phases, base cuda:all run 2:"; grep -v timing $out/b2_2.log | tail -4
echo "--- engine phases, now cuda:0 run 2:"; grep -v timing $out/n1_2.log | tail -7
tar -C $out -czf $final/logs.tgz .
rm -rf $data
STEP_TIMEOUT=200 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -12
