#!/usr/bin/env bash
# Call 129 (2026-11-29, 2 x H200): the final code (disco's entries faulted in as huge pages
# where granted, before they are page-locked): disco similar --all over 200,000 x 10,000,
# df7e5ef's simkit (base) against this code, one GPU and two alternated (engine phases
# printed, outputs compared); then the cluster tests and bench/distributed.sh's dedup and
# disco.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/base.tar.xz
export PATH=$st/bin:$PATH
data=$(mktemp -d)
simkit_bench_disco --sizes 200000 --features 10000 --write-model "$data/disco.skd" > /dev/null 2>&1
bin_of() { case $1 in base) echo .gpu/base/simkit ;; *) echo $st/bin/simkit ;; esac; }
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
run() {  # WAY DEVICE TAG
  local t; t=$(SIMKIT_ENGINE_STATS=1 wall $(bin_of $1) disco similar --all --model "$data/disco.skd" --features 10000 --k 10 --precision tf32 --kernel cublas --device $2 --timings --quiet -o "$data/$3.tsv" 2> $out/$3.log)
  echo "disco $2 $1 ($3): $t s; $(grep -h timing $out/$3.log | sed 's/^simkit: timing: //' | grep -E 'waited|all pairs' | tr '\n' ' ')"
  grep -h "locked and uploaded" $out/$3.log | sed -E 's/.*\(the entries locked and uploaded ([0-9.]+) ms\)/  entries locked and uploaded \1 ms/' | tr '\n' ' '; echo
}
for r in 1 2 3; do
  run base cuda:0 b1_$r; run now cuda:0 n1_$r; run base cuda:all b2_$r; run now cuda:all n2_$r
done
for r in 1 2 3; do for f in n1_$r b2_$r n2_$r b1_$r; do cmp -s "$data/b1_1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"; done; done
echo "outputs compared: $(wc -l < $data/b1_1.tsv) lines"
tar -C $out -czf $final/logs.tgz .
rm -rf $data
STEP_TIMEOUT=200 DIST_TIMEOUT=200 DIST_JOBS="dedup disco" bash scripts/gpu-run.sh $final/cluster cluster 2>&1 | tail -12
