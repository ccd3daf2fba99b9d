#!/usr/bin/env bash
# Call 57 (2026-11-28, 1 GPU): where disco's fixed costs go at 200,000 x 10,000 TF32:
# the whole command under nsys (CUDA API and OS runtime summaries), one GPU.
set -u
out=$1
. scripts/gpu-env.sh
tar -C $st/bin -xJf .gpu/call56_bins.tar.xz
command -v nsys || ls /usr/local/cuda/bin | grep -i nsys
ls -d /opt/nvidia/nsight-systems* /usr/local/cuda*/nsight-systems* 2>/dev/null
nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
d=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 200000 --features 10000 --write-model $d/disco.skd > /dev/null 2>&1
run() { SIMKIT_ENGINE_STATS=1 $st/bin/simkit disco similar --all --model $d/disco.skd --features 10000 --k 10 --precision tf32 --kernel cublas --device cuda:0 --timings --quiet -o $d/out.tsv "$@"; }
run 2>&1 | grep "engine:\|rows on\|the engine\|timing" | grep -v "512"
if [ -n "$nsys" ]; then
  $nsys profile -o $d/prof --trace=cuda,osrt --sample=none --cpuctxsw=none $st/bin/simkit disco similar --all --model $d/disco.skd --features 10000 --k 10 --precision tf32 --kernel cublas --device cuda:0 --quiet -o $d/out2.tsv > $out/nsys_run.log 2>&1
  echo "nsys exit $?"
  $nsys stats --report cuda_api_sum --format csv $d/prof.nsys-rep 2>/dev/null | head -30 | cut -d, -f1-4,9 > $out/api.csv
  cat $out/api.csv
  $nsys stats --report osrt_sum --format csv $d/prof.nsys-rep 2>/dev/null | head -16 | cut -d, -f1-4,9
  $nsys stats --report cuda_gpu_mem_time_sum --format csv $d/prof.nsys-rep 2>/dev/null | head -10
  $nsys stats --report cuda_api_trace --format csv $d/prof.nsys-rep 2>/dev/null | awk -F, 'NR>1 && $2 > 2000000' | cut -c1-200 | head -40
fi
