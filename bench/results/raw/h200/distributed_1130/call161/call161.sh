#!/usr/bin/env bash
# Call 161 (2026-11-30, 2 x H200): GLVQ's two-GPU goal measured again on this session's code
# (f7a5a33): one epoch at the seed's scale (synthetic 2,144,749 x 160, 3,755 classes, mb 2048,
# 8 and 1 prototypes a class) on GPU 0, on cuda:all and under mpirun -np 2, in one call.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
STEP_TIMEOUT=170 timeout 560 bash scripts/gpu-run.sh $final lvq-dist > $final/run.txt 2>&1
grep '^== ' $final/run.txt
rm -f $final/logs.tar.gz
