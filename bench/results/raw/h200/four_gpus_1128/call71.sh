#!/usr/bin/env bash
# Call 71 (2026-11-28, the 2-GPU kind): the review's fixes to the GPU hiding (a variable
# already set read as CUDA reads it; errors naming the user's --device and variable).
# ClusterGpu.* tests; then a variable set by the user.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
CLUSTER_BENCH=0 STEP_TIMEOUT=300 bash scripts/gpu-run.sh $out/tests cluster > $out/tests.txt 2>&1
echo "cluster tests: exit $?"; grep -E "simkit_cluster_tests:" $out/tests.txt | head -1
grep -A8 ': Failure$' $out/tests.txt | head -20
m=data/samples/vectors.vec
$st/bin/simkit neighbors --model $m king paris --device cuda:0 > $out/zero.txt 2>&1
for v in "1,0" "0,1" "GPU-bad-uuid-entry,0"; do
  CUDA_VISIBLE_DEVICES=$v $st/bin/simkit neighbors --model $m king paris --device cuda:1 > $out/one.txt 2>&1
  echo "CUDA_VISIBLE_DEVICES=$v --device cuda:1: exit $? $(cmp -s $out/zero.txt $out/one.txt && echo 'same as cuda:0' || head -c 300 $out/one.txt)"
done
CUDA_VISIBLE_DEVICES=0,7,1 $st/bin/simkit neighbors --model $m king --device cuda:1 2>&1 | head -2
$st/bin/simkit neighbors --model $m king --device cuda:1,5 2>&1 | head -2
