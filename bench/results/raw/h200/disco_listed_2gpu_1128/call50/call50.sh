#!/usr/bin/env bash
# Call 50 (2026-11-28, the 2-GPU kind): the dense form's listed columns on two GPUs. The
# 200,000-word disco command (TF32, cuBLAS) on one GPU, cuda:all and mpirun -np 2 with the
# stage of 5bbdf9f (before), then with this code's simkit in the stage (twice); the whole
# cluster tests on this code.
set -u
out=$1
nvidia-smi -L
export SIMKIT_ENGINE_STATS=1
DIST_DATA=$(mktemp -d)
export DIST_DATA
show() {
  grep -P "^disco\t" $out/$1/distributed/distributed.tsv 2>/dev/null | tr '\t' ' ' | sed "s/^/$1: /" || tail -n 20 $out/$1.txt
  tar -xzf $out/$1/logs.tar.gz -O --wildcards '*disco_*.log' 2>/dev/null | grep -o "product [0-9]* of [0-9]* ([0-9]* listed entries)" | sort | uniq -c | sed "s/^/$1: /"
}
CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/before cluster > $out/before.txt 2>&1
echo "before: exit $?"; show before
n=$(mktemp -d)
tar -C $n -xJf .gpu/stage.tar.xz
tar -C $n/bin -xJf .gpu/call50_bins.tar.xz
tar -C $n -cf - . | xz -T0 -1 > .gpu/stage.tar.xz
for r in 1 2; do
  CLUSTER_TESTS=0 DIST_TIMEOUT=300 STEP_TIMEOUT=200 DIST_JOBS=disco bash scripts/gpu-run.sh $out/now$r cluster > $out/now$r.txt 2>&1
  echo "now$r: exit $?"; show now$r
done
CLUSTER_BENCH=0 STEP_TIMEOUT=300 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
grep -A8 ': Failure$' $out/tests.txt | head -20
