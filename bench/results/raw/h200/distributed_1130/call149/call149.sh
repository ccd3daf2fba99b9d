#!/usr/bin/env bash
# Call 149 (2026-11-30, 2 x H200): the code of call 147: compute-sanitizer racecheck on the
# disco test whose rows are locked ahead, given the whole call (calls 137 and 141 cut it at
# 150 s).
set -u
final=$1
mkdir -p $final
SAN_TESTS="simkit_disco_tests" SAN_TOOLS="racecheck" SAN_FILTER='GpuDisco.RowsLockedAheadGiveTheSameLists' \
  SAN_TIMEOUT=560 timeout 590 bash scripts/gpu-run.sh $final/san sanitize > $final/san.txt 2>&1
grep '^== ' $final/san.txt
