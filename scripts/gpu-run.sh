#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, after scripts/gpu-stage.sh staged .gpu/:
# every test program (GPU tests included), the GPU tests under compute-sanitizer, and
# every benchmark with its PyTorch peer. Results go to the folder named by the first
# argument or $SIMKIT_GPU_OUT (default gpu-results); a short table is printed last.
#   scripts/gpu-run.sh OUT [tests] [sanitize] [bench] [sweep]   (default: the first three)
# OUT receives summary.txt, logs.tar.gz (every log and XML report) and the benchmark JSON.
set -uo pipefail
final=${1:-${SIMKIT_GPU_OUT:-gpu-results}}
shift || true
parts=${*:-tests sanitize bench}
mkdir -p "$final"
out=$(mktemp -d)
root=$PWD
stage=$(mktemp -d)
tar -C "$stage" -xJf .gpu/stage.tar.xz
export LD_LIBRARY_PATH="$stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SIMKIT_SOURCE_DIR="$root" SIMKIT_BINARY="$stage/bin/simkit" PYTHONUNBUFFERED=1
summary=()
note() { summary+=("$1"); echo "== $1"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$out/device.csv" 2>&1
note "device: $(tail -n 1 "$out/device.csv")"
if ldd "$stage"/bin/* | grep -q "not found"; then
  ldd "$stage"/bin/* | grep "not found" | sort -u
  note "MISSING LIBRARIES: see above"
fi

if [[ " $parts " == *" tests "* ]]; then
  for t in "$stage"/bin/simkit_*_tests; do
    name=$(basename "$t")
    start=$(date +%s)
    "$t" --gtest_output="xml:$out/$name.xml" > "$out/$name.log" 2>&1
    status=$?
    passed=$(grep -c '^\[       OK \]' "$out/$name.log")
    skipped=$(grep -c '^\[  SKIPPED \]' "$out/$name.log")
    failed=$(grep -c '^\[  FAILED  \] .*(' "$out/$name.log")
    note "$name: exit $status, $passed passed, $failed failed, $skipped skipped ($(( $(date +%s) - start )) s)"
    grep -A6 ': Failure$' "$out/$name.log" | head -n 40
  done
fi

if [[ " $parts " == *" sanitize "* ]]; then
  # GPU tests only (their names say Gpu); each tool reports to its own log.
  filter='*Gpu*'
  for tool in memcheck racecheck synccheck initcheck; do
    log="$out/sanitizer-$tool.log"
    start=$(date +%s)
    for t in "$stage"/bin/simkit_core_tests "$stage"/bin/simkit_neighbors_tests; do
      compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
        "$t" --gtest_filter="$filter" --gtest_brief=1 >> "$log" 2>&1
      echo "exit $? for $(basename "$t")" >> "$log"
    done
    errors=$(grep -E "ERROR SUMMARY: [1-9]|exit 99" "$log" | wc -l)
    note "compute-sanitizer $tool: $(grep -c '^exit 0' "$log") clean runs, $errors with errors ($(( $(date +%s) - start )) s)"
  done
fi

if [[ " $parts " == *" bench "* ]]; then
  "$stage"/bin/simkit_bench_neighbors --device cuda --json "$out/neighbors_gpu.json" > "$out/neighbors_gpu.txt" 2> "$out/neighbors_gpu.log"
  note "simkit_bench_neighbors: exit $?"
  python3 bench/peers/torch_neighbors.py --json "$out/neighbors_torch.json" > "$out/neighbors_torch.txt" 2>&1
  note "torch peer: exit $?"
  cat "$out/neighbors_gpu.log" | grep -E "ceilings|agree|one query"
  cat "$out/neighbors_torch.txt"
fi

if [[ " $parts " == *" sweep "* ]]; then
  # How the score-tile size moves batched throughput, with the engine's host/device split.
  for mb in ${SWEEP_TILES:-16 64}; do
    SIMKIT_ENGINE_STATS=1 SIMKIT_GPU_TILE_MB=$mb "$stage"/bin/simkit_bench_neighbors --device cuda \
      --precisions fp16,tf32 --single-reps 5 --batch-reps 5 --check 0 --skip-ceilings \
      > "$out/sweep_$mb.txt" 2> "$out/sweep_$mb.log"
    note "tile $mb MB: $(grep -h 'batch of' "$out/sweep_$mb.log" | sed 's/bench: //' | tr '\n' ' ')"
    note "  engine: $(grep '^engine' "$out/sweep_$mb.log" | tail -n 1)"
  done
  if command -v ncu >/dev/null; then
    bench=("$stage"/bin/simkit_bench_neighbors --device cuda --check 0 --skip-ceilings)
    ncu --clock-control none --cache-control none --kernel-name regex:'cosine_gemv|select|fill_empty' --launch-skip 20 --launch-count 8 \
      "${bench[@]}" --precisions fp32 --single-reps 4 --batch-reps 0 > "$out/ncu_single.txt" 2>&1
    ncu --clock-control none --cache-control none --kernel-name regex:'gemm|select|Kernel|xmma|nvjet' --launch-skip 300 --launch-count 6 \
      "${bench[@]}" --precisions fp16 --single-reps 1 --batch-reps 1 > "$out/ncu_batch.txt" 2>&1
    for f in ncu_single ncu_batch; do
      echo "---- $f"
      grep -E '^  [a-zA-Z_].*\(|Duration|DRAM Throughput' "$out/$f.txt" | sed -E 's/\(T2, .*//; s/Context 1.*//' | head -n 40
    done
  fi
fi

echo
echo "==== summary"
printf '%s\n' "${summary[@]}" | tee "$final/summary.txt"
[ -f "$out/neighbors_gpu.txt" ] && cat "$out/neighbors_gpu.txt" | tee -a "$final/summary.txt"
for f in neighbors_gpu.json neighbors_torch.json; do [ -f "$out/$f" ] && cp "$out/$f" "$final/"; done
tar -C "$out" -czf "$final/logs.tar.gz" .
rm -rf "$stage" "$out"
