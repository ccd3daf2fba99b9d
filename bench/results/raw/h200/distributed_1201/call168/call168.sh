#!/usr/bin/env bash
# Call 168 (2026-12-01, 1 x H200): the final kernel code: the dedup and command-line GPU
# tests, memcheck on the dedup tests of real files, hard signatures and every pair.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
echo "GPUs: $(nvidia-smi -L | wc -l); commit $(cat .gpu/commit 2>/dev/null)" | tee $final/summary.txt
TEST_PROGRAMS="simkit_dedup_tests simkit_cli_tests" STEP_TIMEOUT=150 SAN_TIMEOUT=200 SAN_TESTS="simkit_dedup_tests" SAN_TOOLS="memcheck" \
  SAN_FILTER='GpuDedup.SsdeepMatchingEqualsTheCpuOn*:GpuDedup.EveryPair*' \
  timeout 500 bash scripts/gpu-run.sh /tmp/t tests sanitize > $final/tests.txt 2>&1
grep '^== ' $final/tests.txt | tee -a $final/summary.txt
grep -h -B2 -A12 ': Failure$' /tmp/t/logs/*.log 2>/dev/null | head -60 | tee -a $final/summary.txt
