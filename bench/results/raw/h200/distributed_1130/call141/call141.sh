#!/usr/bin/env bash
# Call 141 (2026-11-30, 2 x H200): 554a7b4 (DeviceGuard gives a thread back the context it
# had, none where it had none; one lock_once for disco's entries and dedup's codes): the
# GPU test programs that use DeviceGuard or the page-locking (core, dedup, disco, command
# line, engine, neighbors, lvq), then compute-sanitizer memcheck, racecheck and synccheck
# on the new core tests and the disco test whose rows are locked ahead.
set -u
final=$1
mkdir -p $final
TEST_PROGRAMS="simkit_core_tests simkit_dedup_tests simkit_disco_tests simkit_cli_tests simkit_engine_tests simkit_neighbors_tests simkit_lvq_tests" \
  STEP_TIMEOUT=120 SAN_TIMEOUT=150 SAN_TESTS="simkit_core_tests simkit_disco_tests" SAN_TOOLS="memcheck racecheck synccheck" \
  SAN_FILTER='GpuDeviceGuard.*:GpuPageLock.*:GpuStagedCopy.*:GpuDisco.RowsLockedAheadGiveTheSameLists' \
  timeout 560 bash scripts/gpu-run.sh $final/tests tests sanitize > $final/run.txt 2>&1
echo "exit $?"
grep '^== ' $final/run.txt | tail -14
