#!/usr/bin/env bash
# Call 51 (2026-11-28, the 2-GPU kind): as call 50, after the columns' word counts were
# made once a process, with the rows (while the GPU starts); the cluster tests again.
set -u
out=$1
nvidia-smi -L
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
show() {
  grep -P "^disco\s" $out/$1.txt | sed "s/^/$1: /"
  tar -xzf $out/$1/logs.tar.gz -O --wildcards '*disco_*.log' 2>/dev/null | grep "rows on the GPU\|all pairs of" | grep -v "of 128 \|512 words" | cut -c1-220 | sed "s|^|$1: |"
}
CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/before cluster > $out/before.txt 2>&1
echo "before: exit $?"; show before
n=$(mktemp -d)
tar -C $n -xJf .gpu/stage.tar.xz
tar -C $n/bin -xJf .gpu/call51_bins.tar.xz
tar -C $n -cf - . | xz -T0 -1 > .gpu/stage.tar.xz
for r in 1 2; do
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/now$r cluster > $out/now$r.txt 2>&1
  echo "now$r: exit $?"; show now$r
done
CLUSTER_BENCH=0 STEP_TIMEOUT=300 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
grep -A8 ': Failure$' $out/tests.txt | head -20
