#!/usr/bin/env bash
# Call 111 (2026-11-29, 1 x H200): the ssdeep dedup of a million hashes as a user runs it,
# this session's host work (4539a23: the list parsed on every core, signatures read for the
# GPU without substrings, pairs written without fmt and while the next are formatted, freed beside the writing) against
# 53af7e1 (b110/), alternated three times on the GPU and once on the CPU, outputs compared;
# then the GPU tests of the programs the change touches.
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
for d in cuda:0 cpu; do
  for r in 1 2 3; do
    [ $d = cpu ] && [ $r = 2 ] && break
    for w in before now; do
      t=$(wall $(bin_of $w) dedup "$data/hashes.ssdeep" --device $d --timings --quiet -o "$data/${w}_${d/:/}$r.tsv" 2> $out/${w}_${d/:/}$r.log)
      echo "dedup $d $w $r: $t s; $(grep -h timing $out/${w}_${d/:/}$r.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
    done
  done
done
for f in now_cuda01 before_cuda02 now_cuda02 before_cuda03 now_cuda03 before_cpu1 now_cpu1; do
  cmp -s "$data/before_cuda01.tsv" "$data/$f.tsv" || echo "$f DIFFERS"
done
echo "outputs compared: $(wc -l < $data/before_cuda01.tsv) lines"
# disco similar --all on 100,000 words (its lists written through the same slices).
$st/bin/simkit_bench_disco --sizes 100000 --features 10000 --write-model "$data/disco.skd" > /dev/null 2>&1
for r in 1 2; do
  for w in before now; do
    t=$(wall $(bin_of $w) disco similar --all --model "$data/disco.skd" --features 10000 --k 10 --precision tf32 --kernel cublas --device cuda:0 --timings --quiet -o "$data/disco_${w}$r.tsv" 2> $out/disco_${w}$r.log)
    echo "disco $w $r: $t s; $(grep -h timing $out/disco_${w}$r.log | sed 's/^simkit: timing: //' | tr '\n' ' ')"
  done
done
for f in disco_now1 disco_before2 disco_now2; do cmp -s "$data/disco_before1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"; done
echo "disco outputs compared: $(wc -l < $data/disco_before1.tsv) lines"
for t in simkit_dedup_tests simkit_cli_tests simkit_disco_tests; do
  timeout 300 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped"
  grep -A6 ': Failure$' $out/$t.log | head -20
done
tar -C $out -czf $final/logs.tgz .
