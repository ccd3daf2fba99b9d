#!/usr/bin/env bash
# Call 135 (2026-11-30, 2 x H200): the GPU dedup and disco tests; dedup's spread on two
# GPUs phase by phase (this code, with the answer's pages faulted in beside the GPUs'
# sorts, against a variant that faults them in after), a million and two million hashes;
# disco similar --all on 200,000 words, 190140f's simkit (base) against this code (the
# entries page-locked while the GPUs start), cuda:0 and cuda:all alternated, outputs
# compared; then bench/distributed.sh's dedup and disco.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/bins.tar.xz
export PATH=$st/bin:$PATH
for t in simkit_dedup_tests simkit_disco_tests; do
  timeout 200 $st/bin/$t > $out/$t.log 2>&1
  echo "$t: exit $? $(grep -c '^\[       OK' $out/$t.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/$t.log) failed"
  grep -B8 '^\[  FAILED  \] .*(' $out/$t.log | head -30
done
data=$(mktemp -d)
bin_of() { case $1 in base) echo .gpu/base/simkit ;; variant) echo .gpu/variant/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
# disco: base against now.
$st/bin/simkit_bench_disco --sizes 200000 --features 10000 --write-model $data/disco.skd > /dev/null 2>&1
drun() {  # WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $1) disco similar --all --model $data/disco.skd --features 10000 --k 10 \
    --precision tf32 --kernel cublas --device $2 --timings --quiet -o $data/$3.tsv 2> $out/$3.log)
  echo "disco $2 $1 ($3): $t s; $(grep -h timing $out/$3.log | sed 's/^simkit: timing: //' | grep -E 'all pairs|waited|locked' | sed 's/dense form, 9999 columns//' | tr '\n' ' ')"
  echo "   rows: $(grep -h 'locked and uploaded\|rows on the GPU in' $out/$3.log | grep -v '(8192)' | grep -o 'scatter and lists [0-9.]* ms (the entries locked and uploaded [0-9.]* ms)\|rows on the GPU in [0-9.]* ms' | tr '\n' ' ')"
  if [ "$3" != d_b1_1 ]; then cmp -s $data/d_b1_1.tsv $data/$3.tsv || echo "$3 DIFFERS"; rm -f $data/$3.tsv; fi
}
for r in 1 2 3; do
  drun base cuda:0 d_b1_$r; drun now cuda:0 d_n1_$r; drun base cuda:all d_b2_$r; drun now cuda:all d_n2_$r
done
echo "disco outputs compared: $(wc -l < $data/d_b1_1.tsv) lines"
rm -f $data/disco.skd $data/d_b1_1.tsv
# dedup: the spread's phases, now against the variant.
mkdir -p $data/boost
tar -C "$data/boost" -xJf .gpu/boost.tar.xz
$st/bin/simkit hash -r "$data/boost" -o "$data/boost.ssdeep" --quiet
run() {  # SIZE WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $2) dedup "$data/h$1.ssdeep" --device $3 --timings --quiet -o "$data/$4.tsv" 2> $out/$4.log)
  echo "dedup $1 $3 $2 ($4): $t s; $(grep -h timing $out/$4.log | sed 's/^simkit: timing: //' | grep -E 'matched|in all' | tr '\n' ' ')"
  echo "   $(grep -h 'matches spread: each\|matches spread: cut\|matches of GPU\|range of GPU' $out/$4.log | sed 's/dedup: //' | tr '\n' ';')"
  if [ "$4" != "${1}_n1_1" ]; then cmp -s "$data/${1}_n1_1.tsv" "$data/$4.tsv" || echo "$4 DIFFERS"; rm -f "$data/$4.tsv"; fi
}
for size in 2000000 1000000; do
  $st/bin/simkit_bench_dedup --list "$data/boost.ssdeep" --synthetic $size --write-list "$data/h$size.ssdeep" > /dev/null 2>&1
  run $size now cuda:0 ${size}_n1_1
  for r in 1 2; do run $size now cuda:all ${size}_n2_$r; run $size variant cuda:all ${size}_v2_$r; done
  rm -f $data/${size}_n1_1.tsv
done
tar -C $out -czf $final/logs.tgz .
rm -rf $data
CLUSTER_TESTS=0 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -8
