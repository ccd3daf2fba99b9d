#!/usr/bin/env bash
# Call 134 (2026-11-30, 2 x H200): dedup's answers as MatchList (matches left unset by
# resize: no zeroing pass on one thread, the pages still faulted in on all cores). The GPU
# dedup tests; a million and two million hashes, 190140f's simkit (base) against this code,
# cuda:0 and cuda:all alternated, outputs compared, engine phases printed; then the
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
bin_of() { case $1 in base) echo .gpu/base/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
run() {  # SIZE WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $2) dedup "$data/h$1.ssdeep" --device $3 --timings --quiet -o "$data/$4.tsv" 2> $out/$4.log)
  echo "dedup $1 $3 $2 ($4): $t s; $(grep -h timing $out/$4.log | sed 's/^simkit: timing: //' | grep -E 'matched|in all|waited' | tr '\n' ' ')"
  if [ "$4" != "${1}_b1_1" ]; then cmp -s "$data/${1}_b1_1.tsv" "$data/$4.tsv" || echo "$4 DIFFERS"; rm -f "$data/$4.tsv"; fi
}
for size in 1000000 2000000; do
  $st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic $size --write-list "$data/h$size.ssdeep" > /dev/null 2>&1
  rounds=3; [ $size = 2000000 ] && rounds=2
  for r in $(seq 1 $rounds); do
    run $size base cuda:0 ${size}_b1_$r; run $size now cuda:0 ${size}_n1_$r; run $size base cuda:all ${size}_b2_$r; run $size now cuda:all ${size}_n2_$r
  done
  echo "outputs of $size compared: $(wc -l < $data/${size}_b1_1.tsv) lines"
  rm -f $data/${size}_b1_1.tsv
done
for tag in 1000000_n2_2 1000000_b2_2 1000000_n1_2 1000000_b1_2 2000000_n2_2 2000000_n1_2; do
  echo "--- engine phases, $tag:"; grep -v timing $out/$tag.log | grep -v "^dedup worker" | tail -12
done
tar -C $out -czf $final/logs.tgz .
rm -rf $data
STEP_TIMEOUT=200 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -12
