#!/usr/bin/env bash
# Call 94 (2026-11-29, 1 x H200): more runs of the final code (f7719f6) against the code
# before the session (c88/): the edit-rate pipeline at 20,000 documents (final five times,
# the code before twice, alternated), the whole edit-rate command (three runs each), and
# the process's start in small whole commands: `simkit --version` and `simkit postings
# query` on the Brown Corpus (its 1,000 queries) on the CPU and the GPU (five runs each).
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c88.tar.xz
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
tar -C "$data" -xJf .gpu/postings.tar.xz
b="--docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 --device cuda --no-cpu-pipeline --reps 3"
show() { echo "bench $1: $(grep 'bench: edit rate' $out/bench_$1.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"gpu_verify_detail":{[^}]*}\|"pairs_found":[0-9]*\|"gpu_kernel_ms":[0-9.]*' | tr '\n' ' ')"; }
for r in 1 2 3 4 5; do
  timeout 100 $st/bin/simkit_bench_dedup $b > $out/bench_final_$r.log 2>&1; show final_$r
  if [ $r -le 2 ]; then timeout 100 .gpu/c88/simkit_bench_dedup $b > $out/bench_c88_$r.log 2>&1; show c88_$r; fi
done
run() {  # NAME BIN DEVICE
  local start=$(date +%s.%N)
  timeout 120 $2 dedup --mode edit-rate "$data/boost" "$data/copies" --device $3 --timings --quiet -o "$data/$1.tsv" 2> $out/$1.log
  local s=$?
  echo "$1: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/$1.log | sed 's/^simkit: timing: //' | tr '\n' '|' | cut -c1-520)"
}
for r in 1 2 3; do
  run c88_cuda_$r .gpu/c88/simkit cuda
  run final_cuda_$r $st/bin/simkit cuda
done
for f in final_cuda_1 c88_cuda_2 final_cuda_2 c88_cuda_3 final_cuda_3; do
  cmp -s "$data/c88_cuda_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"
done
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for d in cpu cuda; do
  for w in c88 final; do
    bin=$([ $w = c88 ] && echo .gpu/c88/simkit || echo $st/bin/simkit)
    times=""
    for i in 1 2 3 4 5; do
      s0=$(date +%s.%N)
      $bin postings query --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device $d > $out/postings_${w}_$d.txt 2> $out/postings_${w}_$d.log
      times="$times $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}")"
    done
    echo "postings query $d $w:$times s"
  done
  cmp -s $out/postings_c88_$d.txt $out/postings_final_$d.txt && echo "postings $d outputs equal" || echo "postings $d outputs DIFFER"
done
for w in c88 final; do
  bin=$([ $w = c88 ] && echo .gpu/c88/simkit || echo $st/bin/simkit)
  echo "$w --version: $(for i in 1 2 3 4 5; do /usr/bin/time -f %e $bin --version 2>&1 >/dev/null; done | tr '\n' ' ')"
done
tar -C $out -czf $final/logs.tgz .
