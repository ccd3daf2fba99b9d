#!/usr/bin/env bash
# Call 47 (2026-11-28, 1 x H100): where the device time of `disco similar --all` (100,000 x
# 10,000, TF32) goes with 2,048 and with all columns in the product: nsys's kernel summary.
set -u
out=$1
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/call46_bins.tar.xz
data=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 100000 --features 10000 --write-model $data/disco.skd > /dev/null 2>&1
which nsys ncu
for c in 2048 10000; do
  SIMKIT_DISCO_PRODUCT_COLUMNS=$c timeout 200 nsys profile -o $data/p$c --stats=false .gpu/xp_simkit disco similar --all --model $data/disco.skd --features 10000 --k 10 --precision tf32 --kernel cublas --device cuda -q -o $data/o$c.tsv > $out/nsys$c.log 2>&1
  nsys stats --report cuda_gpu_kern_sum --format csv $data/p$c.nsys-rep 2>/dev/null | cut -d, -f1-4,9 | head -12 | cut -c1-160
done
SIMKIT_DISCO_PRODUCT_COLUMNS=2048 timeout 200 ncu --kernel-name regex:add_shared --launch-skip 20 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis .gpu/xp_simkit disco similar --all --model $data/disco.skd --features 10000 --k 10 --precision tf32 --kernel cublas --device cuda -q -o $data/n.tsv > $out/ncu.log 2>&1
grep -E "Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|L2 Hit|L1/TEX Hit|Mem Busy|Max Bandwidth|Block Limit|Waves" $out/ncu.log | head -30
