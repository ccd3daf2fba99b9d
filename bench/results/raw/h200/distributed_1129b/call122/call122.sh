#!/usr/bin/env bash
# Call 122 (2026-11-29, 1 x H200): the output written out as it grows (sync_file_range each
# 64 MiB, so commit's fsync waits for the last part): the core and CLI test programs, then
# dedup of a million hashes on one GPU, call 121's simkit (b121) against this one,
# alternated, and this one writing to /dev/shm (no disk) beside them; outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
export PATH=$st/bin:$PATH  # the staged ssdeep, for the CLI tests that compare with it
tar -C .gpu -xJf .gpu/b121.tar.xz
for t in simkit_core_tests simkit_cli_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep -B5 '^\[  FAILED  \] .*(' $out/$t.log | head -30
done
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
$st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/hashes.ssdeep" > /dev/null 2>&1
df -h "$data" /dev/shm | sed 's/^/df: /'
bin_of() { case $1 in before) echo .gpu/b121/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
run() {  # WAY OUTPUT_DIR TAG
  local t; t=$(wall $(bin_of $1) dedup "$data/hashes.ssdeep" --device cuda:0 --timings --quiet -o "$2/$3.tsv" 2> $out/$3.log)
  echo "dedup $1 ($3): $t s; $(grep -h timing $out/$3.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
}
for r in 1 2 3; do run before $data b_$r; run now $data n_$r; done
run now /dev/shm shm_1
for f in n_1 n_2 n_3 b_2 b_3; do cmp -s "$data/b_1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"; done
cmp -s "$data/b_1.tsv" /dev/shm/shm_1.tsv || echo "shm_1 DIFFERS"
echo "outputs compared: $(wc -l < $data/b_1.tsv) lines, $(stat -c %s $data/b_1.tsv) bytes"
rm -f /dev/shm/shm_1.tsv
tar -C $out -czf $final/logs.tgz .
