#!/usr/bin/env bash
# Call 109 (2026-11-29, 1 x H200): a second call for the final code's figures (0225026's
# build) against the session's start (h98/: 9869782): the pipeline at 20,000 documents and
# the whole edit-rate command on the GPU, alternated three times; outputs compared.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/h98.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
bin_of() { [ $1 = h98 ] && echo .gpu/h98/$2 || echo $st/bin/$2; }
for r in 1 2 3; do
  for w in h98 final; do
    timeout 100 $(bin_of $w simkit_bench_dedup) --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 \
      --device cuda --no-cpu-pipeline --reps 3 > $out/bench_${w}_$r.log 2>&1
    echo "bench $w $r: $(grep 'bench: edit rate' $out/bench_${w}_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*\|"gpu_ms":[0-9.]*' | tr '\n' ' ')"
  done
done
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
for r in 1 2 3; do
  for w in h98 final; do
    t=$(wall $(bin_of $w simkit) dedup --mode edit-rate "$data/boost" "$data/copies" --device cuda --timings --quiet -o "$data/${w}_$r.tsv" 2> $out/${w}_cmd$r.log)
    echo "dedup cuda $w $r: $t s; $(grep -h timing $out/${w}_cmd$r.log | sed 's/^simkit: timing: //' | grep -o '[0-9.]* s in all\|wrote [0-9]* pairs in [0-9.]* s' | tr '\n' ' ')"
  done
done
for f in final_1 h98_2 final_2 h98_3 final_3; do cmp -s "$data/h98_1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"; done
echo "outputs compared: $(wc -l < $data/h98_1.tsv) lines"
tar -C $out -czf $final/logs.tgz .
