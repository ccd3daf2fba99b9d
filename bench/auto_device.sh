#!/usr/bin/env bash
# Where --device auto should stop taking the GPU: whole commands, as a user runs them once,
# on the CPU and on the GPU at growing sizes, and what auto does, in one call on the GPU
# machine (after scripts/gpu-stage.sh; the Boost headers and the DISCO corpora staged in
# .gpu/). Each cell is the median wall time of AUTO_REPEATS runs (default 3).
#   bash bench/auto_device.sh OUT
# Writes OUT/auto_device.tsv: job, size, unit, cpu s, cuda s, auto s, the device auto took.
# AUTO_JOBS narrows the jobs (default "edit-rate ssdeep embed neighbors postings lvq disco";
# cca runs when named;
# postings needs the Brown Corpus staged in .gpu/postings.tar.xz, lvq Fashion-MNIST in
# .gpu/fashion-mnist).
set -euo pipefail
out=${1:?usage: bench/auto_device.sh OUT}
repeats=${AUTO_REPEATS:-3}
mkdir -p "$out"
stage=$(mktemp -d)
data=$(mktemp -d)
trap 'rm -rf "$stage" "$data"' EXIT
tar -C "$stage" -xJf .gpu/stage.tar.xz
if [ -f .gpu/boost.tar.xz ]; then tar -C "$data" -xJf .gpu/boost.tar.xz; fi
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
    "$simkit" "$@" --device "$device" --timings -q < "${row_input:-/dev/null}" > /dev/null 2> "$data/last.err"
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

jobs=" ${AUTO_JOBS:-edit-rate ssdeep embed neighbors postings lvq disco} "

# dedup --mode edit-rate: the first N Boost headers (sorted by path), hard-linked into a folder
# (their paths kept below it).
sizes=""
if [[ $jobs == *" edit-rate "* ]]; then
  find "$data/boost" -type f | sort > "$data/headers.txt"
  total=$(wc -l < "$data/headers.txt")
  sizes="500 1000 2000 4000 6000 8000 $total"
fi
for n in $sizes; do
  [ "$n" -le "$total" ] || continue
  mkdir -p "$data/edit$n"
  head -n "$n" "$data/headers.txt" | xargs -d '\n' cp -l --parents -t "$data/edit$n"
  row dedup-edit-rate "$n" documents dedup --mode edit-rate "$data/edit$n"
done

# dedup --mode ssdeep: the Boost headers' ssdeep list, and lists of N signatures made from
# it (simkit_bench_dedup --write-list: each a list signature with random edits).
[[ $jobs == *" ssdeep "* ]] && "$simkit" hash -r "$data/boost" -o "$data/boost.ssd" --quiet
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
# neighbors: .skv models of N random unit rows x 300 and Q queries of their words on
# standard input (the size cell is "rows x queries").
if [[ $jobs == *" neighbors "* ]]; then
  for rows in ${AUTO_NEIGHBORS_ROWS:-20000 200000 2196016}; do
    "$stage/bin/simkit_bench_neighbors" --rows "$rows" --write-model "$data/m$rows.skv" --check 2048 > /dev/null 2>&1
    for q in ${AUTO_NEIGHBORS_QUERIES:-16 64 256 1024}; do
      head -n "$q" "$data/m$rows.skv.queries" > "$data/q.txt"
      row_input=$data/q.txt row neighbors "${rows}x$q" rows-x-queries neighbors --model "$data/m$rows.skv" --format tsv
    done
    rm -f "$data/m$rows.skv"
  done
fi

# postings query: the Brown Corpus's index and its 1,000 real queries repeated N times.
if [[ $jobs == *" postings "* ]] && [ -f .gpu/postings.tar.xz ]; then
  tar -C "$data" -xJf .gpu/postings.tar.xz
  "$simkit" postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
  for n in ${AUTO_POSTINGS_REPEATS:-1 8 32 128 512 1024}; do
    for _ in $(seq "$n"); do cat "$data/postings/brown-queries.txt"; done > "$data/pq.txt"
    row postings "$((n * 1000))" queries postings query --index "$data/brown.skp" --queries "$data/pq.txt"
  done
fi
# lvq train: the first N samples of Fashion-MNIST (.gpu/fashion-mnist) as .npy with their
# labels, 4 prototypes a class, 10 epochs, mini-batch 64 (as bench/whole_commands.sh).
if [[ $jobs == *" lvq "* ]] && [ -d .gpu/fashion-mnist ]; then
  python3 - "$data" << 'EOF'
import gzip, sys
import numpy as np
d = sys.argv[1]
x = np.frombuffer(gzip.open(".gpu/fashion-mnist/train-images-idx3-ubyte.gz").read(), np.uint8, offset=16).reshape(-1, 784)
y = np.frombuffer(gzip.open(".gpu/fashion-mnist/train-labels-idx1-ubyte.gz").read(), np.uint8, offset=8)
for n in (2000, 8000, 20000, 60000):
    np.save(f"{d}/lvq{n}.npy", x[:n].astype(np.float32) / 255)
    open(f"{d}/lvq{n}.labels", "w").write("\n".join(map(str, y[:n])) + "\n")
EOF
  for n in ${AUTO_LVQ_SIZES:-2000 8000 20000 60000}; do
    row lvq "$n" samples lvq train --train "$data/lvq$n.npy" --train-labels "$data/lvq$n.labels" -p 4 -e 10 -b 64 \
      -o "$data/m.skq"
  done
fi

# disco similar --all: N words of synthetic MI rows over 10,000 features, each word's 10 nearest.
if [[ $jobs == *" disco "* ]]; then
  for n in ${AUTO_DISCO_SIZES:-1000 2000 4000 8000}; do
    "$stage/bin/simkit_bench_disco" --sizes "$n" --features 10000 --write-model "$data/d$n.skd" > /dev/null 2>&1
    row disco-all "$n" words disco similar --all --model "$data/d$n.skd" --features 10000 --k 10
  done
fi
# cca, exact at every tuple: two streams of p and q columns (NumPy, a fixed seed, 8 shared
# factors), TUPLES rows, window N; AUTO_CCA_SHAPES lists p:q:n:tuples.
if [[ $jobs == *" cca "* ]]; then
  for shape in ${AUTO_CCA_SHAPES:-4:4:128:1000 16:16:256:2000 64:64:512:2000 128:256:1024:3000 256:512:2048:3000}; do
    IFS=: read -r p q n t <<< "$shape"
    python3 - "$data/cca$shape.tsv" "$p" "$q" "$t" << 'EOF2'
import sys
import numpy as np
p, q, t = (int(v) for v in sys.argv[2:5])
rng = np.random.default_rng(20261126)
z = rng.standard_normal((t, 8))
x = z @ rng.standard_normal((8, p)) + rng.standard_normal((t, p))
y = z @ rng.standard_normal((8, q)) + rng.standard_normal((t, q))
np.savetxt(sys.argv[1], np.hstack([x, y]), fmt="%.6g", delimiter="\t")
EOF2
    row cca "$shape" "p:q:n:tuples" cca --input "$data/cca$shape.tsv" --x "0-$((p - 1))" --y "$p-$((p + q - 1))" -n "$n" -k 2
  done
fi
echo "auto_device: $table"
