#!/usr/bin/env bash
# Call 137 (2026-11-30, 2 x H200): f8fbc50 (dedup's codes page-locked while the GPUs
# start) against efec221's simkit (base), a million hashes, cuda:0 and cuda:all
# alternated three times, outputs compared; the GPU test programs of dedup, disco, the
# command line and the engine; compute-sanitizer memcheck and racecheck on the dedup index
# test (the spread over "GPUs") and the disco test whose rows are locked ahead.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/bins.tar.xz
export PATH=$st/bin:$PATH
data=$(mktemp -d)
bin_of() { case $1 in base) echo .gpu/base/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
run() {  # SIZE WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $2) dedup "$data/h$1.ssdeep" --device $3 --timings --quiet -o "$data/$4.tsv" 2> $out/$4.log)
  echo "dedup $1 $3 $2 ($4): $t s; $(grep -h timing $out/$4.log | sed 's/^simkit: timing: //' | grep -E 'matched|in all|waited' | sed 's/ signatures on NVIDIA H200//' | tr '\n' ' ')"
  if [ "$4" != "${1}_b1_1" ]; then cmp -s "$data/${1}_b1_1.tsv" "$data/$4.tsv" || echo "$4 DIFFERS"; rm -f "$data/$4.tsv"; fi
}
size=1000000
$st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic $size --write-list "$data/h$size.ssdeep" > /dev/null 2>&1
for r in 1 2 3; do run $size base cuda:0 ${size}_b1_$r; run $size now cuda:0 ${size}_n1_$r; run $size base cuda:all ${size}_b2_$r; run $size now cuda:all ${size}_n2_$r; done
echo "outputs compared: $(wc -l < $data/${size}_b1_1.tsv) lines"
tar -C $out -czf $final/logs.tgz .
rm -rf $data
TEST_PROGRAMS="simkit_dedup_tests simkit_disco_tests simkit_cli_tests simkit_engine_tests" STEP_TIMEOUT=200 \
  SAN_TESTS="simkit_dedup_tests simkit_disco_tests" SAN_TOOLS="memcheck racecheck" \
  SAN_FILTER='GpuDedup.SsdeepIndexEqualsTheCpuInChunksAndShares:GpuDisco.RowsLockedAheadGiveTheSameLists' \
  bash scripts/gpu-run.sh $final/tests tests sanitize 2>&1 | grep '^== ' | tail -12
