#!/usr/bin/env bash
# Call 69: when libcuda is loaded in simkit's process (LD_DEBUG=libs), and the one-GPU
# disco command with the variable set outside against inside.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh > /dev/null
LD_DEBUG=libs $st/bin/simkit neighbors --model data/samples/vectors.vec king --device cuda:0 --timings 2> $out/lddebug.txt > /dev/null
grep -n -E "calling init|initialize program|transferring control" $out/lddebug.txt | grep -E "libcuda|libmpi|program|control|libnccl|libcublas\.|libopen" | cut -c1-200 | head -20
grep -n "find library=libcuda" $out/lddebug.txt | head -3
wc -l $out/lddebug.txt
