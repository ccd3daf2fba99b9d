#!/usr/bin/env bash
# Call 37 (2026-11-28, 1 x H100, 16 cores): the edit-rate pipeline at 20,000 documents (Boost
# headers and edited copies) with the signatures' pass vectorised (new: AVX2 chosen at run
# time) against the code before (old), alternated: simkit_bench_dedup's GPU pipeline, then
# whole `simkit dedup --mode edit-rate` commands on the GPU and once each on the CPU;
# outputs compared.
set -u
out=$1
. scripts/gpu-env.sh
nproc; grep -m1 "model name" /proc/cpuinfo; grep -o -m1 avx2 /proc/cpuinfo
data=$(mktemp -d)
tar -C .gpu -xJf .gpu/call37_bins.tar.xz
tar -C "$data" -xJf .gpu/boost.tar.xz
for r in 1 2; do for which in old new; do
  timeout 200 .gpu/${which}_bench_dedup --device cuda --docs "$data/boost" --sizes 20000 --scratch "$data/copies_$which" \
    --no-cpu-pipeline --reps 3 --kernel-strings 2000 --json $out/er_${which}_$r.json > $out/er_${which}_$r.log 2>&1
  echo "bench $r $which: $(grep 'bench: edit rate' $out/er_${which}_$r.log | cut -c1-400)"
done; done
cmp -s <(cd "$data/copies_old" && find . -type f | sort | xargs md5sum) <(cd "$data/copies_new" && find . -type f | sort | xargs md5sum) && echo "copies equal"
cp="$data/copies_new"
for r in 1 2; do for which in old new; do
  bin=$st/bin/simkit; [ $which = new ] && bin=.gpu/new_simkit
  start=$(date +%s.%N)
  timeout 120 $bin dedup --mode edit-rate "$data/boost" "$cp" --device cuda --timings --quiet -o "$data/rate_${which}_$r.tsv" 2> $out/cmd_${which}_$r.log
  s=$?
  echo "command $r $which cuda: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $s; $(grep -h timing $out/cmd_${which}_$r.log | tr '\n' ' ' | cut -c1-300)"
done; done
for which in old new; do
  bin=$st/bin/simkit; [ $which = new ] && bin=.gpu/new_simkit
  start=$(date +%s.%N)
  timeout 120 $bin dedup --mode edit-rate "$data/boost" "$cp" --device cpu --timings --quiet -o "$data/rate_${which}_cpu.tsv" 2> $out/cmd_${which}_cpu.log
  echo "command $which cpu: $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s exit $?; $(grep -h timing $out/cmd_${which}_cpu.log | tr '\n' ' ' | cut -c1-300)"
done
for f in rate_new_1 rate_old_2 rate_new_2 rate_old_cpu rate_new_cpu; do cmp -s "$data/rate_old_1.tsv" "$data/$f.tsv" && echo "$f equal ($(wc -l < $data/$f.tsv) lines)" || echo "$f DIFFERS"; done
