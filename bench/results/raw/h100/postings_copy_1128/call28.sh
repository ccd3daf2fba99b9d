#!/usr/bin/env bash
# Call 28 (experiment, not kept): where the GPU batch's answers step goes on the H100
# (Brown, 1,000 queries): pieces 1/4/8, the piece copies serial or on all cores, or one
# pageable copy straight into Results.
set -u
out=$1
. scripts/gpu-env.sh
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/postings.tar.xz
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for cfg in "XP_PIECES=4" "XP_PIECES=4 XP_SERIAL=1" "XP_PIECES=1" "XP_PIECES=8" "XP_PAGEABLE=1" "XP_PIECES=4" "XP_PIECES=2 XP_SERIAL=1" "XP_PAGEABLE=1"; do
  env $cfg SIMKIT_POSTINGS_PHASES=1 timeout 120 .gpu/xp_bench --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" \
    --device cuda --reps 41 --algorithms auto > $out/xp.log 2> $out/xp.err
  echo "[$cfg] $(grep -E "CRoaring|flat_explicit" $out/xp.log | sed 's/  */ /g' | cut -c8-70 | tr '\n' '|')"
  grep "gpu part" $out/xp.err | sed -n '60p;100p;140p' | cut -c1-230
done
