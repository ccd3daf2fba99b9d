#!/usr/bin/env bash
# What a user waits for: each GPU job's whole command, run once as a user runs it (start,
# read, upload, compute, write), on the GPU and on the CPU, beside the engine time the
# command reports itself (--timings). One call on the GPU machine, after
# scripts/gpu-stage.sh (the programs) with the Boost list, the Brown Corpus and
# Fashion-MNIST carried in .gpu/ (as scripts/gpu-run.sh finds them).
#   bash bench/whole_commands.sh OUT
# Writes OUT/whole_commands.tsv (job, device, wall s, exit, the command's timing lines) and
# each run's stderr as OUT/whole_<job>_<device>.log. WHOLE_JOBS narrows the jobs (default
# "neighbors disco postings lvq cca"); WHOLE_CPU=0 skips the CPU runs.
set -uo pipefail
out=${1:?usage: bench/whole_commands.sh OUT}
mkdir -p "$out"
jobs=" ${WHOLE_JOBS:-neighbors disco postings lvq cca} "
stage=$(mktemp -d)
data=$(mktemp -d)
trap 'rm -rf "$stage" "$data"' EXIT
tar -C "$stage" -xJf .gpu/stage.tar.xz
export LD_LIBRARY_PATH="$stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$stage/bin
table=$out/whole_commands.tsv
printf 'job\tdevice\twall_s\texit\ttimings\n' > "$table"

# run JOB DEVICE INPUT CMD...: the whole command once, its standard input from INPUT, its
# output thrown away; wall time, exit status and its --timings lines into the table.
run() {
  local job=$1 device=$2 input=$3
  shift 3
  local log=$out/whole_${job}_$device.log start status
  start=$(date +%s.%N)
  timeout "${WHOLE_TIMEOUT:-300}" "$@" --device "$device" --timings -q < "$input" > /dev/null 2> "$log"
  status=$?
  printf '%s\t%s\t%s\t%s\t%s\n' "$job" "$device" "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}")" \
    "$status" "$(grep -h 'timing' "$log" | sed 's/^simkit: //' | paste -sd '|' -)" | tee -a "$table"
}
both() {
  local job=$1
  shift
  run "$job" cuda "$@"
  [ "${WHOLE_CPU:-1}" = 0 ] || run "$job" cpu "$@"
}

if [[ $jobs == *" neighbors "* ]]; then
  # The seed's model size, 2,196,016 x 300 unit vectors (.skv), and 2,048 queries of its words.
  "$bin/simkit_bench_neighbors" --write-model "$data/glove.skv" --check 2048 2> "$out/data_neighbors.log"
  head -n 2048 "$data/glove.skv.queries" > "$data/queries.txt"
  both neighbors "$data/queries.txt" "$bin/simkit" neighbors --model "$data/glove.skv" --batch 2048 --format tsv
  rm -f "$data/glove.skv"
fi

if [[ $jobs == *" disco "* ]]; then
  # 100,000 words of synthetic MI rows over 10,000 features, every word's 10 nearest, TF32
  # (the CPU: fp32, 20,000 words, as its whole command at 100,000 takes minutes).
  "$bin/simkit_bench_disco" --sizes 100000 --features 10000 --write-model "$data/disco.skd" > /dev/null 2>&1
  run disco cuda /dev/null "$bin/simkit" disco similar --all --model "$data/disco.skd" --features 10000 --k 10 \
    --precision tf32 --kernel cublas
  if [ "${WHOLE_CPU:-1}" != 0 ]; then
    "$bin/simkit_bench_disco" --sizes 20000 --features 10000 --write-model "$data/disco20k.skd" > /dev/null 2>&1
    run disco20k cuda /dev/null "$bin/simkit" disco similar --all --model "$data/disco20k.skd" --features 10000 --k 10
    run disco20k cpu /dev/null "$bin/simkit" disco similar --all --model "$data/disco20k.skd" --features 10000 --k 10
  fi
fi

if [[ $jobs == *" postings "* ]] && [ -f .gpu/postings.tar.xz ]; then
  # The Brown Corpus, a document a line, and its 1,000 real queries.
  tar -C "$data" -xJf .gpu/postings.tar.xz
  "$bin/simkit" postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
  both postings /dev/null "$bin/simkit" postings query --index "$data/brown.skp" \
    --queries "$data/postings/brown-queries.txt"
fi

if [[ $jobs == *" lvq "* ]] && [ -d .gpu/fashion-mnist ]; then
  # Fashion-MNIST (60,000 x 784, 10 classes), 4 prototypes a class, 10 epochs, mini-batch 64.
  both lvq /dev/null "$bin/simkit" lvq train --train .gpu/fashion-mnist/train-images-idx3-ubyte.gz \
    --test .gpu/fashion-mnist/t10k-images-idx3-ubyte.gz -p 4 -e 10 -b 64 -o "$data/model.skq"
fi

if [[ $jobs == *" cca "* ]]; then
  # Two streams, p 256 and q 512, 6,048 tuples (the window 2,048 full for 4,001 of them),
  # generated with NumPy from a fixed seed: correlated through 8 shared factors.
  python3 - "$data/cca.tsv" << 'EOF'
import sys
import numpy as np
rng = np.random.default_rng(20261126)
t, p, q = 6048, 256, 512
z = rng.standard_normal((t, 8))
x = z @ rng.standard_normal((8, p)) + rng.standard_normal((t, p))
y = z @ rng.standard_normal((8, q)) + rng.standard_normal((t, q))
np.savetxt(sys.argv[1], np.hstack([x, y]), fmt="%.6g", delimiter="\t")
EOF
  both cca /dev/null "$bin/simkit" cca --input "$data/cca.tsv" --x 0-255 --y 256-767 -n 2048 -k 5
fi
echo "whole_commands: $table"
