#!/usr/bin/env bash
# Call 43 (2026-11-28, 1 x H100, 16 cores): a second call for the figures that stood on one:
# the edit-rate pipeline at 20,000 documents scoring every signature pair against pruning
# by length (1,024 rows a GPU call), alternated twice, and the CPU pipeline once each way
# (call 40's); the whole edit-rate commands before the pruning and with it (call 41's); the
# whole commands of call 38 (dedup of the Boost hashes, disco 100k in TF32/fp16/fp32,
# postings on Brown).
set -u
out=$1
. scripts/gpu-env.sh
nproc
tar -C .gpu -xJf .gpu/call37_bins.tar.xz
tar -C .gpu -xJf .gpu/call40_bins.tar.xz
tar -C .gpu -xJf .gpu/call41_bins.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
tar -C "$data" -xJf .gpu/postings.tar.xz
b=".gpu/xp_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 2000"
fields='"candidates":[0-9]*\|"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"cpu_s":[0-9.]*\|"cpu_stages_s":\[[^]]*\]\|"pairs_found":[0-9]*'
for r in 1 2; do for way in every pruned; do
  flag=""; [ $way = every ] && flag=--score-every-pair
  XP_RUN_ROWS=1024 timeout 200 $b --device cuda --no-cpu-pipeline --reps 3 $flag > $out/gpu_${way}_$r.log 2>&1
  echo "bench gpu $r $way: $(grep 'bench: edit rate' $out/gpu_${way}_$r.log | grep -o "$fields" | tr '\n' ' ')"
done; done
for way in every pruned; do
  flag=""; [ $way = every ] && flag=--score-every-pair
  XP_RUN_ROWS=1024 timeout 200 $b --device cpu --reps 1 $flag > $out/cpu_$way.log 2>&1
  echo "bench cpu $way: $(grep 'bench: edit rate' $out/cpu_$way.log | grep -o "$fields" | tr '\n' ' ')"
done
run() {  # NAME CMD...: once, wall and timing lines
  local name=$1; shift
  local start=$(date +%s.%N)
  timeout 200 "$@" --timings -q > /dev/null 2> $out/$name.log
  local s=$?
  echo "$name: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$name.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-300)"
}
for r in 1 2; do
  run rate_before_cuda_$r .gpu/new_simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda -o "$data/rb$r.tsv"
  run rate_final_cuda_$r .gpu/final_simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda -o "$data/rf$r.tsv"
done
run rate_before_cpu .gpu/new_simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device cpu -o "$data/rbc.tsv"
run rate_final_cpu .gpu/final_simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device cpu -o "$data/rfc.tsv"
for f in rb2 rf1 rf2 rbc rfc; do cmp -s "$data/rb1.tsv" "$data/$f.tsv" && echo "$f equal" || echo "$f DIFFERS"; done
.gpu/final_simkit hash -r "$data/boost" > "$data/boost.ssd" 2> /dev/null
for r in 1 2; do run dedup_boost_cuda_$r .gpu/final_simkit dedup "$data/boost.ssd" --device cuda -o "$data/pairs.tsv"; done
$st/bin/simkit_bench_disco --sizes 100000 --features 10000 --write-model "$data/disco.skd" > /dev/null 2>&1
for p in tf32 fp16 fp32; do
  kernel=cublas; [ $p = fp32 ] && kernel=auto
  run disco_$p $st/bin/simkit disco similar --all --model "$data/disco.skd" --features 10000 --k 10 --precision $p --kernel $kernel --device cuda -o "$data/disco_$p.tsv"
done
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for r in 1 2; do run postings_cuda_$r .gpu/final_simkit postings query --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device cuda -o "$data/p.tsv"; done
