#!/usr/bin/env bash
# disco build --measure ppmi, one or two settings changed at a time from the issue's row
# (five words each side, alpha 0.75, no distance weights, no shift, min count 1), each
# scored by disco evaluate on the four public gold standards: the evidence behind
# --measure ppmi's defaults (docs/disco.md). Prints a Markdown table.
#   bench/ppmi_variants.sh CORPUS [SIMKIT] [GOLD_DIR]
set -euo pipefail
corpus=$1
simkit=${2:-build/simkit}
gold=${3:-$(dirname "$0")/../../shared/data/word-sim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every setting spelled out on each line (an option may be given once).
echo "| change from the issue's row | WS-353 (covered) | SimLex-999 (covered) | RG-65 (covered) | MC-30 (covered) |"
echo "|---|---:|---:|---:|---:|"
while IFS='|' read -r name args; do
  # shellcheck disable=SC2086
  "$simkit" disco build "$corpus" -o "$tmp/m.skd" -q --measure ppmi --alpha 0.75 $args
  row=$("$simkit" disco evaluate --model "$tmp/m.skd" "$gold/EN-WS-353-ALL.txt" "$gold/EN-SIMLEX-999.txt" \
    "$gold/EN-RG-65.txt" "$gold/EN-MC-30.txt" | awk '{printf " %.3f (%s) |", $3, $5}')
  echo "| $name |$row"
done <<'L'
none (the issue's row)|--window 6 --no-distance-weights --shift 1 --min-count 1
distance weights|--window 6 --distance-weights --shift 1 --min-count 1
min count 2|--window 6 --no-distance-weights --shift 1 --min-count 2
min count 5|--window 6 --no-distance-weights --shift 1 --min-count 5
window 5 (four each side)|--window 5 --no-distance-weights --shift 1 --min-count 1
weights, min count 2|--window 6 --distance-weights --shift 1 --min-count 2
weights, shift 1.5|--window 6 --distance-weights --shift 1.5 --min-count 1
weights, shift 2|--window 6 --distance-weights --shift 2 --min-count 1
weights, shift 5|--window 6 --distance-weights --shift 5 --min-count 1
weights, min count 2, shift 1.5|--window 6 --distance-weights --shift 1.5 --min-count 2
weights, min count 2, shift 2 (the defaults)|--window 6 --distance-weights --shift 2 --min-count 2
weights, subsample 1e-4|--window 6 --distance-weights --shift 1 --min-count 1 --subsample 1e-4
L
