#!/usr/bin/env bash
# Call 152 (2026-11-30, 2 x H200): call 151 repeated in a second call: what a process pays to start the GPUs it can see: the
# driver's start and each GPU's context (.gpu/probe/start_probe.cu), with one and with two
# GPUs visible, five processes each; the GPUs' persistence mode as the host has it (read,
# not changed); and `simkit devices`'s wall either way.
set -u
final=$1
mkdir -p $final
. scripts/gpu-env.sh > /dev/null
nvidia-smi --query-gpu=index,name,persistence_mode --format=csv
for v in 0 0,1; do
  for r in 1 2 3 4 5; do echo "visible $v run $r: $(CUDA_VISIBLE_DEVICES=$v .gpu/probe/start_probe)"; done
done
for v in 0 0,1; do
  for r in 1 2 3; do
    s=$(date +%s.%N); CUDA_VISIBLE_DEVICES=$v simkit devices > /dev/null 2>&1; e=$(date +%s.%N)
    echo "simkit devices, visible $v run $r: $(awk -v s=$s -v e=$e 'BEGIN{printf "%.3f", e - s}') s"
  done
done
