#!/usr/bin/env bash
# Call 114 (2026-11-29, 1 x H200): the session's final code (c988583): the dedup and CLI
# test programs on the GPU, memcheck of the dedup GPU tests (quick shapes), and the
# ssdeep dedup of a million hashes as a user runs it, three times on the GPU and once on
# the 16 cores (53af7e1's b110/ once each way beside it), outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
export PATH=$st/bin:$PATH  # the staged ssdeep, for the CLI tests that compare with it
tar -C .gpu -xJf .gpu/b110.tar.xz
for t in simkit_dedup_tests simkit_cli_tests simkit_core_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped"
  grep '^\[  FAILED  \] .*(' $out/$t.log | head
done
SIMKIT_TEST_QUICK=1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuDedup*' > $out/memcheck.log 2>&1
echo "memcheck simkit_dedup_tests GpuDedup* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
$st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/hashes.ssdeep" > /dev/null 2>&1
bin_of() { case $1 in before) echo .gpu/b110/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
run() {  # WAY DEVICE TAG
  local t; t=$(wall $(bin_of $1) dedup "$data/hashes.ssdeep" --device $2 --timings --quiet -o "$data/$3.tsv" 2> $out/$3.log)
  echo "dedup $2 $1 ($3): $t s; $(grep -h timing $out/$3.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
}
run before cuda:0 before_cuda; run now cuda:0 now_cuda1; run now cuda:0 now_cuda2; run now cuda:0 now_cuda3
run before cpu before_cpu; run now cpu now_cpu
for f in now_cuda1 now_cuda2 now_cuda3 before_cpu now_cpu; do cmp -s "$data/before_cuda.tsv" "$data/$f.tsv" || echo "$f DIFFERS"; done
echo "outputs compared: $(wc -l < $data/before_cuda.tsv) lines"
gzip -f $out/memcheck.log
tar -C $out -czf $final/logs.tgz .
