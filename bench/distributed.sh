#!/usr/bin/env bash
# The whole-command runs of bench/results/distributed.md, on a machine with several GPUs:
# each job as a user runs it, on one GPU (--device cuda:0), on every GPU of one process
# (--device cuda:all) and as one rank a GPU (mpirun -np N --device cuda); the outputs
# compared byte for byte with the one-GPU run's; the whole command's wall time beside the
# engine time simkit reports (--timings). Run by scripts/gpu-run.sh (part "cluster"), which
# stages the programs, OpenMPI and the environment (NCCL_NVLS_ENABLE=0 and the rest).
#   bench/distributed.sh OUT [neighbors] [neighbors16] [neighbors-warm] [disco] [dedup] [dedup-every] [lvq] [big]
# DIST_GPUS: the GPUs to use (default: all); DIST_DATA: a folder for the generated data.
set -uo pipefail
out=$1
shift
jobs=" ${*:-neighbors neighbors16 disco dedup lvq} "
gpus=${DIST_GPUS:-$(nvidia-smi -L | wc -l)}
data=${DIST_DATA:-$(mktemp -d)}
bin=$(dirname "$(command -v simkit)")
mkdir -p "$out"
table="$out/distributed.tsv"
printf 'job\tway\tgpus\twall_s\tengine_s\tsame_output\n' > "$table"
failed=0

# run JOB WAY GPUS INPUT ENGINE_PATTERN -- COMMAND...: one whole command, timed; its output
# kept; the engine seconds from its --timings lines (ENGINE_PATTERN: an awk regex whose
# line holds "in N s" or "in N ms"; several such lines are summed).
run() {
  local job=$1 way=$2 n=$3 input=$4 pattern=$5
  shift 6
  local log="$out/${job}_${way}.log" result="$data/${job}_${way}.out"
  local start end
  start=$(date +%s.%N)
  "$@" -o "$result" --timings --quiet < "$input" > /dev/null 2> "$log"
  local status=$?
  end=$(date +%s.%N)
  local wall engine same="-"
  wall=$(awk "BEGIN {printf \"%.3f\", $end - $start}")
  engine=$(awk -v p="$pattern" '$0 ~ p {
      for (i = 1; i < NF; ++i) if ($i == "in" && $(i + 1) ~ /^[0-9.]+$/) {
        v = $(i + 1); u = $(i + 2); sum += (u ~ /^ms/ ? v / 1e3 : v); break } }
      END {printf "%.4f", sum}' "$log")
  if [ "$way" != one ]; then
    if cmp -s "$result" "$data/${job}_one.out"; then
      same=yes
    else  # how many lines differ, and the first few, for the report
      same="NO:$(diff "$result" "$data/${job}_one.out" | grep -c '^<')-lines"
      diff "$result" "$data/${job}_one.out" | head -n 6 > "$out/${job}_${way}.diff"
      failed=1
    fi
  fi
  [ "$status" -eq 0 ] || { same="exit $status"; failed=1; tail -n 3 "$log"; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$job" "$way" "$n" "$wall" "$engine" "$same" | tee -a "$table"
}

# The three ways of one job: ARGS... after the simkit command name.
three_ways() {
  local job=$1 input=$2 pattern=$3
  shift 3
  run "$job" one 1 "$input" "$pattern" -- simkit "$@" --device cuda:0
  run "$job" all "$gpus" "$input" "$pattern" -- simkit "$@" --device cuda:all
  # OpenMPI binds each of 2 or fewer ranks to one core unless told otherwise: the ranks'
  # host work would run on one core each (docs/distributed.md).
  run "$job" mpi "$gpus" "$input" "$pattern" -- mpirun --bind-to none -np "$gpus" simkit "$@" --device cuda
}

if [[ $jobs == *" neighbors "* || $jobs == *" neighbors16 "* ]]; then
  # The seed's model size, 2,196,016 x 300 unit vectors, and 8,192 queries of its words.
  [ -f "$data/glove.skv" ] || "$bin/simkit_bench_neighbors" --write-model "$data/glove.skv" --check 8192 2> "$out/data_neighbors.log"
  # all: --gpu-split auto (each GPU the whole model, a share of the queries: it fits);
  # all-rows: each GPU half the model, as the ranks of mpi hold it.
  if [[ $jobs == *" neighbors "* ]]; then
    three_ways neighbors "$data/glove.skv.queries" "quer" neighbors --model "$data/glove.skv" --batch 8192 --format tsv
    run neighbors all-rows "$gpus" "$data/glove.skv.queries" "quer" -- simkit neighbors --model "$data/glove.skv" \
      --batch 8192 --format tsv --device cuda:all --gpu-split rows
  fi
  if [[ $jobs == *" neighbors16 "* ]]; then
    three_ways neighbors16 "$data/glove.skv.queries" "quer" \
      neighbors --model "$data/glove.skv" --batch 8192 --format tsv --precision fp16
    run neighbors16 all-rows "$gpus" "$data/glove.skv.queries" "quer" -- simkit neighbors --model "$data/glove.skv" \
      --batch 8192 --format tsv --precision fp16 --device cuda:all --gpu-split rows
  fi
fi

if [[ $jobs == *" neighbors-warm "* ]]; then
  # The engine warmed up (what the issue's PyTorch figures measure): batches of 8,192
  # queries over the seed's model size on GPU 0 and on every GPU of one process, each
  # batch's whole call timed on the host (the GPUs' lists merged included); then what a
  # user would write in PyTorch, the model's rows split over the GPUs, on 1 and on all.
  # all: --gpu-split auto (replicas, the batch shared by queries); all-rows: shards.
  for way in one all all-rows; do
    dev=cuda:0 split=auto
    [ "$way" != one ] && dev=cuda:all
    [ "$way" = all-rows ] && split=rows
    SIMKIT_ENGINE_STATS=${DIST_ENGINE_STATS:-} "$bin/simkit_bench_neighbors" --device "$dev" --gpu-split "$split" \
      --precisions fp32,fp16 \
      --batch 8192 --check 256 --single-reps 5 --batch-reps 10 --skip-ceilings --skip-tiles \
      --json "$out/neighbors_warm_$way.json" > "$out/neighbors_warm_$way.txt" 2> "$out/neighbors_warm_$way.log" ||
      { echo "neighbors-warm $way: exit $?"; failed=1; }
    grep -E "agree|batch of" "$out/neighbors_warm_$way.log"
  done
  if [ -f bench/peers/torch_neighbors.py ] && python3 -c "import torch" 2> /dev/null; then
    for n in 1 "$gpus"; do
      python3 bench/peers/torch_neighbors.py --gpus "$n" --batch 8192 --precisions fp32,fp16 \
        --json "$out/neighbors_warm_torch_$n.json" 2>&1 | tail -n 2
    done
  fi
fi

if [[ $jobs == *" big "* ]]; then
  # A model larger than one GPU's memory (70,000,000 x 300 fp32: 84 GB): answered by the
  # GPUs together, each holding its share, beside one GPU streaming it from host memory.
  # On GPUs that would hold it whole (an H200's 141 GiB), every run gets the memory an
  # H100 80GB gives by default (nine tenths of its free memory: --memory-budget 70G),
  # so that one GPU streams the model and each of two holds its half, as on H100s.
  rows=${DIST_BIG_ROWS:-70000000}
  model_bytes=$(( rows * 300 * 4 ))
  gpu_bytes=$(( $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0) * 1024 * 1024 ))
  budget=()
  if (( gpu_bytes / 10 * 9 / 4 * 3 >= model_bytes )); then
    budget=(--memory-budget "${DIST_BIG_BUDGET:-70G}")
    echo "big model: the GPUs hold $gpu_bytes bytes each, enough for the model; every run gets ${budget[*]}"
  fi
  if [ ! -f "$data/big.skv" ]; then
    start=$(date +%s)
    "$bin/simkit_bench_neighbors" --rows "$rows" --write-model "$data/big.skv" --check 2048 2> "$out/data_big.log"
    status=$?
    echo "big model: $rows rows written in $(( $(date +%s) - start )) s (exit $status)"
    tail -n 3 "$out/data_big.log"
  fi
  ls -l "$data/big.skv"
  "$bin/simkit_bench_neighbors" --time-checksum "$data/big.skv"  # .skv 1's one pass against 2's pieces
  run big one 1 "$data/big.skv.queries" "quer" -- simkit neighbors --model "$data/big.skv" --batch 1024 --format tsv \
    --device cuda:0 "${budget[@]}"
  run big all "$gpus" "$data/big.skv.queries" "quer" -- simkit neighbors --model "$data/big.skv" --batch 1024 \
    --format tsv --device cuda:all "${budget[@]}"
  run big mpi "$gpus" "$data/big.skv.queries" "quer" -- mpirun --bind-to none -np "$gpus" simkit neighbors \
    --model "$data/big.skv" --batch 1024 --format tsv --device cuda "${budget[@]}"
  rm -f "$data/big.skv"
fi

if [[ $jobs == *" disco "* ]]; then
  # 200,000 words of synthetic MI rows over 10,000 features (the thesis's dense form).
  words=${DIST_DISCO_WORDS:-200000}
  [ -f "$data/disco.skd" ] || "$bin/simkit_bench_disco" --sizes "$words" --features 10000 --write-model "$data/disco.skd"
  three_ways disco /dev/null "all pairs" disco similar --all --model "$data/disco.skd" --features 10000 --k 10 \
    --precision tf32 --kernel cublas
fi

if [[ $jobs == *" dedup "* || $jobs == *" dedup-every "* ]] && [ -f .gpu/boost.tar.xz ]; then
  # 1,000,000 signatures made from the Boost headers' (simkit_bench_dedup --synthetic).
  if [ ! -f "$data/hashes.ssdeep" ]; then
    mkdir -p "$data/boost"
    tar -C "$data/boost" -xJf .gpu/boost.tar.xz
    simkit hash -r "$data/boost/boost" -o "$data/boost.ssdeep" --quiet
    "$bin/simkit_bench_dedup" --list "$data/boost.ssdeep" --synthetic "${DIST_HASHES:-1000000}" \
      --write-list "$data/hashes.ssdeep"
  fi
  [[ $jobs == *" dedup "* ]] && three_ways dedup /dev/null "matched" dedup "$data/hashes.ssdeep"
  # dedup-every: every compatible pair scored, the path a list takes where the GPU's
  # 7-gram index has no room (tens of millions of signatures); a budget the index passes
  # (3 GiB at a million) makes this list take it. The outputs are compared with the
  # index's answer too.
  if [[ $jobs == *" dedup-every "* ]]; then
    three_ways dedup_every /dev/null "matched" dedup "$data/hashes.ssdeep" --memory-budget "${DIST_EVERY_BUDGET:-1G}"
    if [[ $jobs == *" dedup "* ]]; then  # (this run's index answer, not an earlier run's)
      cmp -s "$data/dedup_every_one.out" "$data/dedup_one.out" && echo "dedup_every: the index's answer" ||
        { echo "dedup_every: NOT the index's answer"; failed=1; }
    fi
  fi
fi

if [[ $jobs == *" lvq "* ]] && [ -n "${DIST_LVQ_ARGS:-}" ]; then
  # An epoch at the seed's scale (the benchmark's data; DIST_LVQ_ARGS: its arguments).
  for way in one all mpi; do
    case $way in
      one) cmd=("$bin/simkit_bench_lvq" $DIST_LVQ_ARGS --device cuda:0) ;;
      all) cmd=("$bin/simkit_bench_lvq" $DIST_LVQ_ARGS --device cuda:all) ;;
      mpi) cmd=(mpirun --bind-to none -np "$gpus" "$bin/simkit_bench_lvq" $DIST_LVQ_ARGS --device cuda) ;;
    esac
    start=$(date +%s.%N)
    "${cmd[@]}" --json "$out/lvq_$way.json" > "$out/lvq_$way.txt" 2> "$out/lvq_$way.log"
    status=$?
    printf 'lvq\t%s\t-\t%s\t-\texit %s\n' "$way" "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}")" "$status" |
      tee -a "$table"
    grep '^bench:' "$out/lvq_$way.log" | tail -n 3
  done
fi

# Speed-ups against the one-GPU run of each job.
echo
awk -F'\t' 'function ratio(a, b) { return b > 0 ? a / b : 0 }
  NR > 1 { wall[$1, $2] = $4; engine[$1, $2] = $5; if ($2 == "one") order[++n] = $1 }
  END {
    printf "%-12s %10s %10s %12s %12s %12s %12s\n", "job", "one wall", "one engine", "all wall x", "all engine x",
           "mpi wall x", "mpi engine x"
    for (i = 1; i <= n; ++i) { j = order[i]
      printf "%-12s %10.3f %10.4f %12.2f %12.2f %12.2f %12.2f\n", j, wall[j, "one"], engine[j, "one"],
             ratio(wall[j, "one"], wall[j, "all"]), ratio(engine[j, "one"], engine[j, "all"]),
             ratio(wall[j, "one"], wall[j, "mpi"]), ratio(engine[j, "one"], engine[j, "mpi"]) }
  }' "$table" | tee "$out/distributed_summary.txt"
[ -n "${DIST_DATA:-}" ] || rm -rf "$data"
exit "$failed"
