#!/usr/bin/env bash
# Call 27 (2026-11-28): on the machine issue 26's goals name (1 x H100, 16 cores): postings
# on Brown three times and the synthetic shape (goal 5: CPU and GPU against CRoaring in the
# same run), the postings GPU tests; disco similar --all at 100,000 words TF32 as a whole
# command three times (goal 2).
set -u
out=$1
. scripts/gpu-env.sh
nproc; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
t=simkit_postings_tests
timeout 200 $st/bin/$t > $out/$t.log 2>&1
echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/postings.tar.xz
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for r in 1 2 3; do
  timeout 120 $st/bin/simkit_bench_postings --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
    --device cuda --reps 41 --algorithms auto --json $out/postings_brown_$r.json > $out/postings_brown_$r.log 2>&1
  echo "brown $r: $(grep -E "auto|CRoaring|_explicit|_managed" $out/postings_brown_$r.log | sed 's/  */ /g' | cut -c8-75 | tr '\n' '|')"
done
timeout 120 $st/bin/simkit_bench_postings --synthetic --device cuda --reps 11 --algorithms auto --json $out/postings_synthetic.json > $out/postings_synthetic.log 2>&1
echo "synthetic: $(grep -E "auto|CRoaring|flat_explicit" $out/postings_synthetic.log | sed 's/  */ /g' | cut -c8-75 | tr '\n' '|')"
rm -rf "$data"
for r in 1 2 3; do
  WHOLE_JOBS=disco WHOLE_CPU=0 timeout 200 bash bench/whole_commands.sh $out/whole_disco_$r > $out/whole_disco_$r.txt 2>&1
  echo "disco 100k TF32 run $r: $(grep -P '^disco\t' $out/whole_disco_$r/whole_commands.tsv | cut -f1-4)"
  grep -h "timing" $out/whole_disco_$r/whole_disco_cuda.log | cut -c1-110 | sed "s/^/  run $r: /"
done
