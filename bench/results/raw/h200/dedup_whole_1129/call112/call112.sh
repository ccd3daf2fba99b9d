#!/usr/bin/env bash
# Call 112 (2026-11-29, 1 x H200): the CPU's ssdeep matcher with the bit-parallel LCS and
# its index built in place (0cb6510) against 53af7e1 (b110/): a million hashes on the 16
# cores, twice each way, and on the GPU (whole command) three times with the new code;
# outputs compared. Then where --device auto should take the GPU now that the CPU is
# faster (bench/auto_device.sh, ssdeep lists of 20,000 to 400,000), and the tests.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/b110.tar.xz
data=$(mktemp -d)
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
$st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic 1000000 --write-list "$data/hashes.ssdeep" > /dev/null 2>&1
echo "list: $(wc -l < $data/hashes.ssdeep) lines, $(stat -c %s $data/hashes.ssdeep) bytes"
bin_of() { case $1 in before) echo .gpu/b110/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
for r in 1 2; do
  for w in before now; do
    t=$(wall $(bin_of $w) dedup "$data/hashes.ssdeep" --device cpu --timings --quiet -o "$data/${w}_cpu$r.tsv" 2> $out/${w}_cpu$r.log)
    echo "dedup cpu $w $r: $t s; $(grep -h timing $out/${w}_cpu$r.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
  done
done
for r in 1 2 3; do
  t=$(wall $st/bin/simkit dedup "$data/hashes.ssdeep" --device cuda:0 --timings --quiet -o "$data/now_cuda$r.tsv" 2> $out/now_cuda$r.log)
  echo "dedup cuda:0 now $r: $t s; $(grep -h timing $out/now_cuda$r.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
done
for f in now_cpu1 before_cpu2 now_cpu2 now_cuda1 now_cuda2 now_cuda3; do
  cmp -s "$data/before_cpu1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"
done
echo "outputs compared: $(wc -l < $data/before_cpu1.tsv) lines"
# The Boost headers' 14,322 real hashes on the 16 cores, three runs each way.
for r in 1 2 3; do
  for w in before now; do
    echo "boost cpu $w $r: $(wall $(bin_of $w) dedup "$data/boost.ssdeep" --device cpu --quiet -o "$data/boost_$w$r.tsv") s"
  done
done
cmp -s "$data/boost_before1.tsv" "$data/boost_now1.tsv" || echo "boost DIFFERS"
rm -f $data/*.tsv
AUTO_JOBS=ssdeep AUTO_SSDEEP_SIZES="20000 50000 100000 200000 400000 1000000" timeout 300 bash bench/auto_device.sh $final/auto > $out/auto.log 2>&1
echo "auto_device: exit $?"; cat $final/auto/auto_device.tsv
for t in simkit_dedup_tests simkit_cli_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped"
  grep '^\[  FAILED  \] .*(' $out/$t.log | head
done
tar -C $out -czf $final/logs.tgz .
