#!/usr/bin/env bash
# Where --device auto should stop taking the GPU: whole commands, as a user runs them once,
# on the CPU and on the GPU at growing sizes, and what auto does, in one call on the GPU
# machine (after scripts/gpu-stage.sh; the Boost headers and the DISCO corpora staged in
# .gpu/). Each cell is the median wall time of AUTO_REPEATS runs (default 3).
#   bash bench/auto_device.sh OUT
# Writes OUT/auto_device.tsv: job, size, unit, cpu s, cuda s, auto s, the device auto took.
# AUTO_JOBS narrows the jobs (default "edit-rate ssdeep embed").
set -euo pipefail
out=${1:?usage: bench/auto_device.sh OUT}
repeats=${AUTO_REPEATS:-3}
mkdir -p "$out"
stage=$(mktemp -d)
data=$(mktemp -d)
trap 'rm -rf "$stage" "$data"' EXIT
tar -C "$stage" -xJf .gpu/stage.tar.xz
tar -C "$data" -xJf .gpu/boost.tar.xz
if [ -f .gpu/disco.tar.xz ]; then tar -C "$data" -xJf .gpu/disco.tar.xz; fi
export LD_LIBRARY_PATH="$stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
simkit=$stage/bin/simkit
table=$out/auto_device.tsv
printf 'job\tsize\tunit\tcpu_s\tcuda_s\tauto_s\tauto_took\n' > "$table"

# median_wall DEVICE CMD...: the median wall seconds of $repeats runs; the last run's
# stderr (its --timings lines) is kept in $data/last.err.
median_wall() {
  local device=$1
  shift
  local times=()
  for _ in $(seq "$repeats"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$simkit" "$@" --device "$device" --timings -q > /dev/null 2> "$data/last.err"
    t1=$(date +%s.%N)
    times+=("$(awk "BEGIN {printf \"%.3f\", $t1 - $t0}")")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

# row JOB SIZE UNIT CMD...: cpu, cuda and auto for one size; the device auto took, from its
# --timings lines (each names the device a step ran on: "on cpu" or the GPU's name).
row() {
  local job=$1 size=$2 unit=$3
  shift 3
  local cpu cuda auto took=cuda
  cpu=$(median_wall cpu "$@")
  cuda=$(median_wall cuda "$@")
  auto=$(median_wall auto "$@")
  grep -q ' on cpu' "$data/last.err" && took=cpu
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$job" "$size" "$unit" "$cpu" "$cuda" "$auto" "$took" | tee -a "$table"
}

jobs=" ${AUTO_JOBS:-edit-rate ssdeep embed} "

# dedup --mode edit-rate: the first N Boost headers (sorted by path), hard-linked into a folder
# (their paths kept below it).
find "$data/boost" -type f | sort > "$data/headers.txt"
total=$(wc -l < "$data/headers.txt")
sizes="500 1000 2000 4000 6000 8000 $total"
[[ $jobs == *" edit-rate "* ]] || sizes=""
for n in $sizes; do
  [ "$n" -le "$total" ] || continue
  mkdir -p "$data/edit$n"
  head -n "$n" "$data/headers.txt" | xargs -d '\n' cp -l --parents -t "$data/edit$n"
  row dedup-edit-rate "$n" documents dedup --mode edit-rate "$data/edit$n"
done

# dedup --mode ssdeep: the Boost headers' ssdeep list, and lists of N signatures made from
# it (simkit_bench_dedup --write-list: each a list signature with random edits).
"$simkit" hash -r "$data/boost" -o "$data/boost.ssd" --quiet
[[ $jobs == *" ssdeep "* ]] &&
  row dedup-ssdeep "$(($(wc -l < "$data/boost.ssd") - 1))" hashes dedup --mode ssdeep "$data/boost.ssd"
[[ $jobs == *" ssdeep "* ]] || AUTO_SSDEEP_SIZES=""
for n in ${AUTO_SSDEEP_SIZES-2000 5000 10000 20000 50000 100000 400000}; do  # AUTO_SSDEEP_SIZES="" for none
  "$stage/bin/simkit_bench_dedup" --list "$data/boost.ssd" --synthetic "$n" --write-list "$data/list$n.ssd" > /dev/null
  row dedup-ssdeep "$n" hashes dedup --mode ssdeep "$data/list$n.ssd"
done

# embed: the first MB of the corpus with the Python documentation (whole lines).
corpus=$data/disco/corpus-py.txt
mbs="1 2 4 6 8 16 28"
[[ $jobs == *" embed "* ]] || mbs=""
for mb in $mbs; do
  head -c $((mb << 20)) "$corpus" | sed '$d' > "$data/embed$mb.txt"
  row embed "$mb" MB embed "$data/embed$mb.txt" -o "$data/v.npy"
done
echo "auto_device: $table"
