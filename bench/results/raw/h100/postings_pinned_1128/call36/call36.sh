#!/usr/bin/env bash
# Call 36 (2026-11-28, 1 x H100): call 35 again on a fresh machine, a second call for goal 5:
# the answers into a reused Results' page-locked ids (new_bench) against the code before
# (base_bench), alternated three times on Brown; phases; the synthetic shape.
set -u
out=$1
. scripts/gpu-env.sh
nproc
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/postings.tar.xz
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for r in 1 2 3; do for which in base_bench new_bench; do
  timeout 120 .gpu/$which --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
    --device cuda --reps 41 --algorithms auto --json $out/brown_${which}_$r.json > $out/brown_${which}_$r.log 2>&1
  echo "brown $r $which: $(grep -E "auto|CRoaring|_explicit|_managed" $out/brown_${which}_$r.log | sed 's/  */ /g' | cut -c8-70 | tr '\n' '|')"
done; done
SIMKIT_POSTINGS_PHASES=1 timeout 120 .gpu/new_bench --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
    --device cuda --reps 41 --algorithms auto > $out/phases.log 2> $out/phases.err
grep "gpu part" $out/phases.err | sed -n '60p;100p;140p' | cut -c1-200
for which in base_bench new_bench; do
timeout 120 .gpu/$which --synthetic --device cuda --reps 11 --algorithms auto > $out/synthetic_$which.log 2>&1
echo "synthetic $which: $(grep -E "auto|CRoaring|flat_explicit" $out/synthetic_$which.log | sed 's/  */ /g' | cut -c8-70 | tr '\n' '|')"
done
