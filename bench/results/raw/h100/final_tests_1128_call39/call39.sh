#!/usr/bin/env bash
# Call 39 (2026-11-28, 1 x H100): the final code's test programs whose code changed this
# session, every test including the GPU ones: postings and core ran in a first try (26 and 23
# passed); dedup (the signatures' pass) needs libfuzzy (the test peer), carried beside it.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call39_tests.tar.xz
export LD_LIBRARY_PATH=$PWD/.gpu:$LD_LIBRARY_PATH
for t in simkit_dedup_tests; do
  timeout 400 .gpu/final_$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  SKIPPED \] .*(' $out/$t.log) skipped $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep "^\[  FAILED" $out/$t.log | head -5
done
