#!/usr/bin/env bash
# Call 60 (2026-11-28, the 2-GPU kind): disco 200k x 10k TF32 on one GPU, cuda:all and
# mpirun: now (entries page-locked whole, once a process; the engine's lists made while the
# device works; its end timed by a probe) twice and before (a06e3cf + call 56's phases) once.
set -u
out=$1
nvidia-smi -L
base=$(mktemp -d)
tar -C $base -xJf .gpu/stage.tar.xz
mk() {  # mk NAME BINS: a stage of the base with these programs
  local n=$(mktemp -d)
  cp -r $base/. $n/
  tar -C $n/bin -xJf $2
  tar -C $n -cf - . | xz -T0 -1 > .gpu/stage_$1.tar.xz
}
mk before .gpu/call56s_bins.tar.xz
mk now .gpu/call60_bins.tar.xz
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
for vr in now1 before1 now2; do
  v=${vr%?}
  cp .gpu/stage_$v.tar.xz .gpu/stage.tar.xz
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/$vr cluster > $out/$vr.txt 2>&1
  echo "$vr: exit $? $(grep -P '^disco\s' $out/$vr.txt | head -3 | awk '{print $2, $4, $5, $6}' | paste -sd ' ')"
  for w in one all; do
    tar -xzf $out/$vr/logs.tar.gz -O --wildcards "*disco_$w.log" 2>/dev/null | grep -v "of 128 \|512 x 512\|(8192)" | grep "disco\|engine" | sed "s/^/$vr $w: /" | cut -c1-250
  done
done
