#!/usr/bin/env bash
# Call 113 (2026-11-29, 1 x H200): the final code of the session (the ssdeep rule at
# 150,000 signatures): where --device auto goes for ssdeep lists around the new threshold
# (bench/auto_device.sh, medians of three), then every test program on the GPU
# (scripts/gpu-run.sh tests).
set -u
final=$1
mkdir -p $final
AUTO_JOBS=ssdeep AUTO_SSDEEP_SIZES="50000 100000 140000 160000 200000 400000" timeout 240 bash bench/auto_device.sh $final/auto > $final/auto.log 2>&1
echo "auto_device: exit $?"; cat $final/auto/auto_device.tsv
bash scripts/gpu-run.sh $final/run tests 2>&1 | tail -15
