#!/usr/bin/env bash
# Call 38 (2026-11-28, 1 x H100, 16 cores): whole commands the README gave only engine times
# for (issue 26, goal 8), each run as a user runs it, its --timings lines beside the wall:
# dedup of the Boost headers' 14,322 hashes (GPU twice, CPU once); disco similar --all at
# 100,000 x 10,000 in TF32, fp16 and fp32 (twice each); postings query of the Brown Corpus
# (GPU twice, CPU once).
set -u
out=$1
. scripts/gpu-env.sh
nproc
data=$(mktemp -d)
tar -C .gpu -xJf .gpu/call37_bins.tar.xz
tar -C "$data" -xJf .gpu/boost.tar.xz
tar -C "$data" -xJf .gpu/postings.tar.xz
new=.gpu/new_simkit
run() {  # NAME CMD...: once, wall and timing lines
  local name=$1; shift
  local start=$(date +%s.%N)
  timeout 200 "$@" --timings -q > /dev/null 2> $out/$name.log
  local s=$?
  echo "$name: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$name.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-330)"
}
$new hash -r "$data/boost" > "$data/boost.ssd" 2> /dev/null
echo "hashes: $(grep -c , $data/boost.ssd)"
for r in 1 2; do run dedup_boost_cuda_$r $new dedup "$data/boost.ssd" --device cuda -o "$data/pairs_cuda.tsv"; done
run dedup_boost_cpu $new dedup "$data/boost.ssd" --device cpu -o "$data/pairs_cpu.tsv"
cmp -s "$data/pairs_cuda.tsv" "$data/pairs_cpu.tsv" && echo "dedup outputs equal ($(wc -l < $data/pairs_cpu.tsv) lines)" || echo "dedup outputs DIFFER"
$st/bin/simkit_bench_disco --sizes 100000 --features 10000 --write-model "$data/disco.skd" > /dev/null 2>&1
for r in 1 2; do for p in tf32 fp16 fp32; do
  kernel=cublas; [ $p = fp32 ] && kernel=auto
  run disco_${p}_$r $st/bin/simkit disco similar --all --model "$data/disco.skd" --features 10000 --k 10 --precision $p --kernel $kernel --device cuda -o "$data/disco_$p.tsv"
done; done
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for r in 1 2; do run postings_cuda_$r $new postings query --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device cuda -o "$data/p_cuda.tsv"; done
run postings_cpu $new postings query --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device cpu -o "$data/p_cpu.tsv"
cmp -s "$data/p_cuda.tsv" "$data/p_cpu.tsv" && echo "postings outputs equal" || echo "postings outputs DIFFER"
