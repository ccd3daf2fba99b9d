#!/usr/bin/env bash
# Call 131 (2026-11-29, 1 x H200): after the review's fix (spread_down with one GPU): the
# dedup test program (match_indexed_dealt on one, two and three workers) and the core
# tests.
set -u
. scripts/gpu-env.sh
export PATH=$st/bin:$PATH
for t in simkit_dedup_tests simkit_core_tests; do
  timeout 150 $st/bin/$t > /tmp/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' /tmp/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' /tmp/$t.log) failed"
  grep -B8 '^\[  FAILED  \] .*(' /tmp/$t.log | head -30
done
