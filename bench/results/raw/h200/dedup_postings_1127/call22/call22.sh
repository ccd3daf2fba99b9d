#!/usr/bin/env bash
# Call 22: postings with slices made on the host again and each entry's list copied into
# the tables (no binary search, no second load in the kernel); the answers' download in
# one piece (SIMKIT_PIECE=1000000000) against four (65536), alternated, Brown each time.
set -u
out=$1
. scripts/gpu-env.sh
timeout 200 $st/bin/simkit_postings_tests > $out/simkit_postings_tests.log 2>&1
echo "postings tests: exit $? $(grep -c "^\[       OK" $out/simkit_postings_tests.log) passed $(grep -c "^\[  FAILED  \] .*(" $out/simkit_postings_tests.log) failed"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_postings_tests --gtest_filter="*Gpu*" > $out/memcheck.log 2>&1
echo "memcheck: exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/postings.tar.xz
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for r in 1 2 3; do
  for piece in 1000000000 65536; do
    SIMKIT_PIECE=$piece timeout 120 $st/bin/simkit_bench_postings --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
      --device cuda --reps 41 --algorithms auto --json $out/brown_${piece}_$r.json > $out/brown_${piece}_$r.log 2>&1
    echo "brown piece $piece run $r: $(grep -E "auto|CRoaring|flat_explicit" $out/brown_${piece}_$r.log | sed 's/  */ /g' | cut -c1-90 | tr '\n' '|')"
  done
done
for piece in 1000000000 65536; do
  SIMKIT_PIECE=$piece SIMKIT_POSTINGS_PHASES=1 timeout 60 $st/bin/simkit_bench_postings --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
    --device cuda --reps 21 --algorithms auto > $out/phases_$piece.log 2>&1
  echo "phases piece $piece (flat_explicit):"; awk '/GPU sliced_explicit/ {on=1; next} /GPU flat_explicit/ {on=0} on && /gpu part/' $out/phases_$piece.log | tail -3
done
timeout 120 $st/bin/simkit_bench_postings --synthetic --device cuda --reps 11 --algorithms auto > $out/synthetic.log 2>&1
echo "synthetic: $(grep -E "auto|CRoaring|flat_explicit" $out/synthetic.log | sed 's/  */ /g' | cut -c1-90 | tr '\n' '|')"
