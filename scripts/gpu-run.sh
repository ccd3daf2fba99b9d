#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, after scripts/gpu-stage.sh staged .gpu/:
# every test program (GPU tests included), the GPU tests under compute-sanitizer, and
# every benchmark with its PyTorch peer. Results go to the folder named by the first
# argument or $SIMKIT_GPU_OUT (default gpu-results); a short table is printed last.
#   scripts/gpu-run.sh OUT [tests] [sanitize] [bench] [dedup] [edit-rate] [recall] [postings] [disco] [embed] [lvq] [cca] [gemm] [python] [cluster] [cluster-sanitize] [lvq-dist] [extra] [sweep]
#   (default: tests sanitize bench dedup postings disco embed lvq cca gemm python; cluster, cluster-sanitize and lvq-dist need two GPUs or more)
# dedup: simkit_bench_dedup on the Boost headers (.gpu/boost.tar.xz, staged by
# gpu-stage.sh): their ssdeep list, 1,000,000 signatures made from it, and the edit-rate
# pipeline at 1,000 .. 20,000 documents, CPU against GPU.
# edit-rate: that pipeline alone (EDIT_RATE_SIZES), and its 20,000 documents as whole
# `simkit dedup --mode edit-rate` commands on the GPU (twice) and the CPU, outputs compared.
# postings: simkit_bench_postings on the seed's data shape (synthetic) and on the whole Brown
# Corpus (.gpu/postings.tar.xz, staged by gpu-stage.sh), every CPU algorithm against the GPU.
# disco: simkit_bench_disco at the thesis's sizes (dense all pairs, fp32 and tf32, synthetic
# MI matrices; DISCO_SIZES) with its PyTorch peer, and models of the real corpora
# (.gpu/disco.tar.xz, with and without the Python documentation) built, scored against the
# gold standards and run all pairs in the sparse form.
# embed: bench/embed.py gpu: simkit embed of the corpus with the Python documentation
# (.gpu/disco.tar.xz) on the GPU five times and on the CPU once, their timings, gold
# standards, and how far the GPU's similarities are from the CPU's.
# lvq: simkit_bench_lvq at the seed's scale (synthetic 2,144,749 x 160, 3755 classes; 1 and
# 8 prototypes a class; mb 1 .. 8192; both distance kernels at small mb) with its PyTorch
# peer, and the test error on Fashion-MNIST (.gpu/fashion-mnist, staged by gpu-stage.sh).
# lvq-dist: one GLVQ epoch at the seed's scale (8 and 1 prototypes a class, mb 2048, fp32 and
# TF32) on GPU 0, on every GPU in one process (--device cuda:all) and, where an MPI launcher
# is found (SIMKIT_MPIEXEC or mpirun on PATH), on a GPU a rank (mpirun -np GPUs), in the same
# call; LVQ_DIST_PROTOTYPES picks the prototypes a class (default 8,1).
# cca: simkit_bench_cca (p 256, q 512, n 2048; Fashion-MNIST halves) and its PyTorch peer.
# python: the Python package staged by gpu-stage.sh (built for the Python named in
# python/simkit/built-for.txt) under PYTHON (default python3): python/tests/test_gpu.py when
# pytest is there, and bench/python_overhead.py on the GPU (WordVectors.neighbors and
# .search through Python against the same calls in C++ and PyTorch; PYTHON_ROWS rows,
# default 2,196,016).
# OUT receives summary.txt, logs.tar.gz (every log and XML report) and the benchmark JSON;
# logs are written into OUT/logs as the run goes, so a run cut short still leaves them.
# Each step has a time limit (STEP_TIMEOUT seconds, default 240; compute-sanitizer tools
# SAN_TIMEOUT each, default 240) so that one slow step cannot eat the whole call.
# SAN_TESTS names the test programs compute-sanitizer runs (default: all nine), SAN_FILTER
# the tests (default *Gpu*; SAN_FILTER_<tool> for one tool), SAN_TOOLS the tools (default:
# memcheck racecheck synccheck initcheck).
# Exit status 1 when any test fails, compute-sanitizer reports anything, a step times
# out or a benchmark fails; 0 otherwise.
set -uo pipefail
final=${1:-${SIMKIT_GPU_OUT:-gpu-results}}
shift || true
parts=${*:-tests sanitize bench dedup postings disco embed lvq cca gemm python}
step_timeout=${STEP_TIMEOUT:-240}
san_timeout=${SAN_TIMEOUT:-240}
mkdir -p "$final/logs"
out="$final/logs"
root=$PWD
stage=$(mktemp -d)
GPU_ENV_FUNCTIONS_ONLY=1 . scripts/gpu-env.sh
stage_programs "$stage"
stage_mpi "$stage"
export PYTHONUNBUFFERED=1
summary=()
failed=0  # any failing test, sanitizer report, time-out or benchmark error: exit 1
note() { summary+=("$1"); echo "== $1"; printf '%s\n' "$1" >> "$final/progress.txt"; }
# bench_step NAME LOG COMMAND...: one benchmark program, time-boxed, stdout to LOG.txt and
# stderr to LOG.log; its exit status noted (non-zero fails the run), its 'bench:' lines shown.
bench_step() {
  local name=$1 log=$2
  shift 2
  timeout "$step_timeout" "$@" > "$out/$log.txt" 2> "$out/$log.log"
  local status=$?
  note "$name: exit $status"
  [ "$status" -eq 0 ] || failed=1
  grep '^bench:' "$out/$log.log" | cut -c1-400
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$out/device.csv" 2>&1
note "device: $(tail -n 1 "$out/device.csv")"
if ldd "$stage"/bin/* | grep -q "not found"; then
  ldd "$stage"/bin/* | grep "not found" | sort -u
  note "MISSING LIBRARIES: see above"
fi

if [[ " $parts " == *" tests "* ]]; then
  for t in "$stage"/bin/simkit_*_tests; do
    name=$(basename "$t")
    # TEST_PROGRAMS (names) runs only those test programs.
    if [ -n "${TEST_PROGRAMS:-}" ] && [[ " $TEST_PROGRAMS " != *" $name "* ]]; then continue; fi
    start=$(date +%s)
    timeout "$step_timeout" "$t" --gtest_output="xml:$out/$name.xml" > "$out/$name.log" 2>&1
    status=$?
    passed=$(grep -c '^\[       OK \]' "$out/$name.log")
    skipped=$(grep -c '^\[  SKIPPED \]' "$out/$name.log")
    failed_tests=$(grep -c '^\[  FAILED  \] .*(' "$out/$name.log")
    note "$name: exit $status, $passed passed, $failed_tests failed, $skipped skipped ($(( $(date +%s) - start )) s)"
    [ "$status" -eq 0 ] || failed=1
    grep -A6 ': Failure$' "$out/$name.log" | head -n 40
  done
fi

if [[ " $parts " == *" sanitize "* ]]; then
  # GPU tests only (their names say Gpu), at the quick shapes; each tool has its own log.
  # initcheck does not see what cuBLAS's half-precision sm_90 GEMMs write (their score
  # tiles read as uninitialised, and a bare cuBLAS fp16 GEMM under initcheck does not
  # finish: bench/results/compute-sanitizer.md), so it skips the fp16/bf16 searches.
  export SIMKIT_TEST_QUICK=1
  for tool in ${SAN_TOOLS:-memcheck racecheck synccheck initcheck}; do
    filter_for_tool="SAN_FILTER_$tool"  # SAN_FILTER_racecheck=... narrows one tool's tests
    filter=${!filter_for_tool:-${SAN_FILTER:-'*Gpu*'}}
    [ "$tool" = initcheck ] && filter="${filter}-*fp16*:*bf16*"
    log="$out/sanitizer-$tool.log"
    start=$(date +%s)
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    for name in ${SAN_TESTS:-simkit_core_tests simkit_engine_tests simkit_neighbors_tests simkit_dedup_tests simkit_postings_tests simkit_disco_tests simkit_embed_tests simkit_lvq_tests simkit_cca_tests}; do
      t="$stage/bin/$name"
      timeout "$san_timeout" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 20 \
        "$t" --gtest_filter="$filter" --gtest_brief=1 >> "$log" 2>&1
      echo "exit $? for $(basename "$t")" >> "$log"
    done
    errors=$(grep -E "ERROR SUMMARY: [1-9]|exit 99" "$log" | wc -l)
    grep -q "^exit 124" "$log" && note "compute-sanitizer $tool: TIMED OUT after $san_timeout s" && failed=1
    [ "$errors" -eq 0 ] || failed=1
    note "compute-sanitizer $tool: $(grep -c '^exit 0' "$log") clean runs, $errors with errors ($(( $(date +%s) - start )) s)"
  done
  unset SIMKIT_TEST_QUICK
fi

if [[ " $parts " == *" bench "* ]]; then
  timeout "$step_timeout" "$stage"/bin/simkit_bench_neighbors --device cuda --json "$out/neighbors_gpu.json" > "$out/neighbors_gpu.txt" 2> "$out/neighbors_gpu.log"
  status=$?
  note "simkit_bench_neighbors: exit $status"
  [ "$status" -eq 0 ] || failed=1
  timeout "$step_timeout" python3 bench/peers/torch_neighbors.py --json "$out/neighbors_torch.json" > "$out/neighbors_torch.txt" 2>&1
  note "torch peer: exit $?"
  cat "$out/neighbors_gpu.log" | grep -E "ceilings|agree|one query"
  cat "$out/neighbors_torch.txt"
fi

if [[ " $parts " == *" postings "* ]]; then
  bench_step "simkit_bench_postings --synthetic" postings_synthetic \
    "$stage"/bin/simkit_bench_postings --synthetic --device cuda --json "$out/postings_synthetic.json"
  if [ -f .gpu/postings.tar.xz ]; then
    data=$(mktemp -d)
    tar -C "$data" -xJf .gpu/postings.tar.xz
    "$stage"/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet --timings 2>&1 | tail -n 1
    bench_step "simkit_bench_postings on Brown" postings_brown "$stage"/bin/simkit_bench_postings \
      --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device cuda \
      --json "$out/postings_brown.json"
    rm -rf "$data"
  fi
fi

if [[ " $parts " == *" disco "* ]]; then
  sizes=${DISCO_SIZES:-5000,10000,20000,50000,100000}
  extra=()
  data=""
  if [ -f .gpu/disco.tar.xz ]; then
    data=$(mktemp -d)
    tar -C "$data" -xJf .gpu/disco.tar.xz
    extra=(--corpus "$data/disco/corpus.txt" --gold "$data/disco/EN-WS-353-ALL.txt" "$data/disco/EN-SIMLEX-999.txt"
      "$data/disco/EN-RG-65.txt")
  fi
  bench_step simkit_bench_disco disco_gpu "$stage"/bin/simkit_bench_disco --device cuda --sizes "$sizes" \
    "${extra[@]}" --json "$out/disco_gpu.json"
  if [ -f "$data/disco/corpus-py.txt" ]; then  # the larger corpus: every word, sparse form
    bench_step simkit_bench_disco_py disco_gpu_py "$stage"/bin/simkit_bench_disco --device cuda \
      --corpus "$data/disco/corpus-py.txt" --gold "$data/disco/EN-WS-353-ALL.txt" "$data/disco/EN-SIMLEX-999.txt" \
      "$data/disco/EN-RG-65.txt" --json "$out/disco_gpu_py.json"
  fi
  timeout "$step_timeout" python3 bench/peers/torch_disco.py --sizes "$sizes" --json "$out/disco_torch.json" \
    > "$out/disco_torch.txt" 2>&1
  note "torch disco peer: exit $?"
  cat "$out/disco_torch.txt" | tail -n 8
  [ -z "$data" ] || rm -rf "$data"
fi

if [[ " $parts " == *" embed "* ]] && [ -f .gpu/disco.tar.xz ]; then
  data=$(mktemp -d)
  tar -C "$data" -xJf .gpu/disco.tar.xz
  corpus="$data/disco/corpus-py.txt"
  [ -f "$corpus" ] || corpus="$data/disco/corpus.txt"
  bench_step "simkit embed (GPU and CPU)" embed_gpu python3 bench/embed.py gpu --simkit "$stage/bin/simkit" \
    --corpus "$corpus" --gold-dir "$data/disco" --json "$out/embed_gpu.json"
  rm -rf "$data"
fi

if [[ " $parts " == *" lvq "* ]]; then
  bench_step "simkit_bench_lvq (seed scale)" lvq_gpu "$stage"/bin/simkit_bench_lvq --device cuda \
    --batches "${LVQ_BATCHES:-1,16,256,2048,8192}" --kernels "${LVQ_KERNELS:-reduction,gemm}" --compare-search \
    --json "$out/lvq_gpu.json"
  for mb in ${LVQ_TILES:-}; do  # distance tiles small enough for the L2 cache
    SIMKIT_LVQ_TILE_MB=$mb bench_step "simkit_bench_lvq tile $mb MB" lvq_tile_$mb "$stage"/bin/simkit_bench_lvq \
      --device cuda --prototypes 8 --batches 2048 --kernels auto --json "$out/lvq_tile_$mb.json"
  done
  timeout "$step_timeout" python3 bench/peers/torch_lvq.py --tf32 --json "$out/lvq_torch.json" > "$out/lvq_torch.txt" 2>&1
  note "torch lvq peer: exit $?"
  cat "$out/lvq_torch.txt" | tail -n 4
  if [ -f .gpu/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    bench_step "simkit_bench_lvq (Fashion-MNIST)" lvq_fashion "$stage"/bin/simkit_bench_lvq --device cuda --rows 0 \
      --train .gpu/fashion-mnist/train-images-idx3-ubyte.gz --test .gpu/fashion-mnist/t10k-images-idx3-ubyte.gz \
      --epochs "${LVQ_EPOCHS:-30}" --json "$out/lvq_fashion.json"
  fi
fi

if [[ " $parts " == *" lvq-dist "* ]]; then
  gpus=$(nvidia-smi -L | wc -l)
  lvq=("$stage"/bin/simkit_bench_lvq --prototypes "${LVQ_DIST_PROTOTYPES:-8,1}" --batches 2048 --kernels auto)
  bench_step "simkit_bench_lvq on GPU 0" lvq_dist_1 "${lvq[@]}" --device cuda:0 --json "$out/lvq_dist_1.json"
  bench_step "simkit_bench_lvq on cuda:all ($gpus GPUs)" lvq_dist_all "${lvq[@]}" --device cuda:all \
    --json "$out/lvq_dist_all.json"
  mpiexec=${SIMKIT_MPIEXEC:-$(command -v mpirun || true)}
  if [ -n "$mpiexec" ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 bench_step "simkit_bench_lvq under mpirun -np $gpus" \
      lvq_dist_mpi "$mpiexec" --oversubscribe -q -np "$gpus" "${lvq[@]}" --device cuda --json "$out/lvq_dist_mpi.json"
  else
    note "lvq-dist: no MPI launcher here (stage OpenMPI or set SIMKIT_MPIEXEC): a GPU a rank not run"
  fi
fi

if [[ " $parts " == *" cca "* ]]; then
  fashion=()
  [ -d .gpu/fashion-mnist ] && fashion=(--fashion .gpu/fashion-mnist)
  # CCA_ARGS: more options for the benchmark (e.g. --batches 0,1,32).
  bench_step "simkit_bench_cca (p 256, q 512, n 2048)" cca_gpu "$stage"/bin/simkit_bench_cca --device cuda \
    --steps "${CCA_STEPS:-400}" "${fashion[@]}" ${CCA_ARGS:-} --json "$out/cca_gpu.json"
  # The other eigen solvers of the one-step path, reporting at every tuple (CCA_EIGENS="" skips them).
  for eigen in ${CCA_EIGENS-syevj batched}; do
    SIMKIT_CCA_EIGEN=$eigen bench_step "simkit_bench_cca eigen $eigen" cca_gpu_$eigen "$stage"/bin/simkit_bench_cca \
      --device cuda --steps 200 --every 1 --batches 1 --skip "" --epsilon "" --json "$out/cca_gpu_$eigen.json"
  done
  timeout "$step_timeout" python3 bench/peers/torch_cca.py --json "$out/cca_torch.json" > "$out/cca_torch.txt" 2>&1
  note "torch cca peer: exit $?"
  cat "$out/cca_torch.txt" | tail -n 4
fi

if [[ " $parts " == *" dedup "* ]] && [ -f .gpu/boost.tar.xz ]; then
  data=$(mktemp -d)
  tar -C "$data" -xJf .gpu/boost.tar.xz
  start=$(date +%s.%N)
  "$stage"/bin/simkit hash -r "$data/boost" -o "$data/boost.ssd" --quiet
  note "simkit hash -r of the Boost headers: $(awk "BEGIN {printf \"%.2f\", $(date +%s.%N) - $start}") s, $(($(wc -l < "$data/boost.ssd") - 1)) files"
  bench_step simkit_bench_dedup dedup_gpu "$stage"/bin/simkit_bench_dedup --device cuda --list "$data/boost.ssd" \
    --synthetic "${DEDUP_SYNTHETIC:-1000000}" --docs "$data/boost" --scratch "$data/copies" \
    --json "$out/dedup_gpu.json"
  # The same 1,000,000 signatures as a user runs them: one whole command each way, the
  # outputs compared (bench/results/dedup.md).
  "$stage"/bin/simkit_bench_dedup --list "$data/boost.ssd" --synthetic "${DEDUP_SYNTHETIC:-1000000}" \
    --write-list "$data/hashes.ssd"
  for dev in cuda cpu; do
    start=$(date +%s.%N)
    timeout "$step_timeout" "$stage"/bin/simkit dedup "$data/hashes.ssd" --device "$dev" --timings --quiet \
      -o "$data/pairs_$dev.tsv" 2> "$out/dedup_command_$dev.log"
    status=$?
    note "simkit dedup --device $dev, ${DEDUP_SYNTHETIC:-1000000} hashes (whole command): $(awk "BEGIN {printf \"%.2f\", $(date +%s.%N) - $start}") s, exit $status; $(grep -h 'timing: matched' "$out/dedup_command_$dev.log" | tail -n 1)"
  done
  cmp -s "$data/pairs_cuda.tsv" "$data/pairs_cpu.tsv" && note "dedup whole commands: outputs equal ($(wc -l < "$data/pairs_cuda.tsv") lines)" ||
    note "dedup whole commands: OUTPUTS DIFFER"
  rm -rf "$data"
fi

if [[ " $parts " == *" edit-rate "* ]] && [ -f .gpu/boost.tar.xz ]; then
  # The edit-rate pipeline alone (bench/results/dedup.md): simkit_bench_dedup at 1,000 ..
  # 20,000 documents (Boost headers and edited copies), CPU against GPU, then the same
  # 20,000 documents as a user runs them, one whole command each way, outputs compared.
  data=$(mktemp -d)
  tar -C "$data" -xJf .gpu/boost.tar.xz
  bench_step "simkit_bench_dedup (edit rate)" dedup_edit_rate "$stage"/bin/simkit_bench_dedup --device cuda \
    --docs "$data/boost" --sizes "${EDIT_RATE_SIZES:-1000,2000,5000,10000,20000}" --scratch "$data/copies" \
    --kernel-strings 2000 --cpu-strings 1000 --json "$out/dedup_edit_rate.json"
  for dev in cuda cuda cpu; do
    start=$(date +%s.%N)
    timeout "$step_timeout" "$stage"/bin/simkit dedup --mode edit-rate "$data/boost" "$data/copies" --device "$dev" \
      --timings --quiet -o "$data/rate_$dev.tsv" 2> "$out/edit_rate_command_$dev.log"
    status=$?
    note "simkit dedup --mode edit-rate --device $dev, $(find "$data/boost" "$data/copies" -type f | wc -l) documents (whole command): $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $start}") s, exit $status; $(grep -h 'timing' "$out/edit_rate_command_$dev.log" | tr '\n' ' ' | cut -c1-300)"
  done
  cmp -s "$data/rate_cuda.tsv" "$data/rate_cpu.tsv" && note "edit-rate whole commands: outputs equal ($(wc -l < "$data/rate_cuda.tsv") lines)" ||
    note "edit-rate whole commands: OUTPUTS DIFFER"
  rm -rf "$data"
fi

if [[ " $parts " == *" recall "* ]] && [ -f .gpu/boost.tar.xz ] && [ -f .gpu/linux.tar.xz ]; then
  # The edit-rate promise, measured (bench/results/dedup.md): Boost's preprocessed headers
  # and the Linux headers, each beside a copy with 1 to 3 random byte edits, CPU and GPU.
  data=$(mktemp -d)
  tar -C "$data" -xJf .gpu/boost.tar.xz
  tar -C "$data" -xJf .gpu/linux.tar.xz
  mkdir "$data/preprocessed"
  find "$data/boost" -path '*preprocessed*' -type f | sort | awk '{print NR, $0}' |
    while read -r n f; do cp "$f" "$data/preprocessed/$n-$(basename "$f")"; done
  bench_step "simkit_bench_dedup --recall (rate 0.05)" dedup_recall "$stage"/bin/simkit_bench_dedup --device cuda \
    --recall "$data/preprocessed" --recall "$data/linux" --recall-files 100000 --rate 0.05 --scratch "$data/copies" \
    --json "$out/dedup_recall.json"
  rm -rf "$data"
fi

if [[ " $parts " == *" cluster "* ]]; then
  # Several GPUs: the cluster tests (mpirun and --device cuda:all against one GPU), then the
  # whole-command runs of bench/results/distributed.md (DIST_JOBS narrows them).
  t="$stage/bin/simkit_cluster_tests"
  # CLUSTER_WRAP runs the test program under a debugger, e.g. "cuda-gdb -batch -ex run -ex bt --args".
  if [ "${CLUSTER_TESTS:-1}" = 1 ]; then  # CLUSTER_TESTS=0: the benchmark alone
    timeout "$step_timeout" ${CLUSTER_WRAP:-} "$t" --gtest_output="xml:$out/cluster_tests.xml" > "$out/simkit_cluster_tests.log" 2>&1
    status=$?
    note "simkit_cluster_tests: exit $status, $(grep -c '^\[       OK \]' "$out/simkit_cluster_tests.log") passed, $(grep -c '^\[  FAILED  \] .*(' "$out/simkit_cluster_tests.log") failed"
    [ "$status" -eq 0 ] || failed=1
    grep -A8 ': Failure$' "$out/simkit_cluster_tests.log" | head -n 40
  fi
  if [ "${CLUSTER_BENCH:-1}" = 1 ]; then  # CLUSTER_BENCH=0: the tests alone
    timeout "${DIST_TIMEOUT:-480}" bash bench/distributed.sh "$out/distributed" ${DIST_JOBS:-} > "$out/distributed.txt" 2>&1
    status=$?
    note "bench/distributed.sh: exit $status"
    [ "$status" -eq 0 ] || failed=1
    cat "$out/distributed.txt"
    cp "$out/distributed/distributed.tsv" "$out/distributed/distributed_summary.txt" "$final/" 2>/dev/null
  fi
fi

if [[ " $parts " == *" cluster-sanitize "* ]]; then
  # compute-sanitizer memcheck over the multi-GPU jobs (cuda:all and mpirun), every process.
  timeout "$step_timeout" bash scripts/gpu-cluster-memcheck.sh > "$out/cluster_memcheck.txt" 2>&1
  status=$?
  note "memcheck of the multi-GPU jobs: exit $status"
  [ "$status" -eq 0 ] || failed=1
  cat "$out/cluster_memcheck.txt"
fi

if [[ " $parts " == *" extra "* ]] && [ -n "${GPU_EXTRA:-}" ]; then
  # GPU_EXTRA: a script of one's own run with the staged programs and environment.
  timeout "$step_timeout" bash "$GPU_EXTRA" 2>&1 | tee "$out/extra.txt"
fi

if [[ " $parts " == *" gemm "* ]]; then
  # The tile study (CUDA-core tiles, wgmma TF32 tiles, 3xTF32) and the fused top-k jobs
  # beside cuBLAS + select (GEMM_SIZES, GEMM_FUSED_ARGS narrow them).
  bench_step "bench gemm (tiles)" gemm_study "$stage"/bin/simkit bench gemm --sizes "${GEMM_SIZES:-512,4096,8192}" \
    --reps "${GEMM_REPS:-5}" --format json -o "$out/gemm_study.json"
  # The fused jobs on each loader of GEMM_FUSED_TMA (SIMKIT_GEMM_TMA: 1, TMA, the default;
  # 0, cp.async; 2, TMA multicast in pairs), the first into gemm_fused.tsv, the others gemm_fused_tmaN.tsv.
  first_tma=1
  for tma in ${GEMM_FUSED_TMA:-1 0}; do
    name=gemm_fused; [ "$first_tma" = 1 ] || name=gemm_fused_tma$tma
    SIMKIT_GEMM_TMA=$tma bench_step "bench gemm (fused, SIMKIT_GEMM_TMA=$tma)" "$name" "$stage"/bin/simkit bench gemm \
      --study fused --reps "${GEMM_REPS:-5}" ${GEMM_FUSED_ARGS:-} -o "$out/$name.tsv"
    first_tma=0
  done
  python3 - "$out/gemm_study.json" <<'PY' | tee "$out/gemm_study_table.txt"
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["rows"]
except Exception as e:
    sys.exit(f"no gemm study: {e}")
for r in rows:
    if r["kernel"].startswith(("cuBLAS", "wgmma", "16x8/8", "8x16/8", "2x2/8")):
        print(f'{r["kernel"]:36s} {r["size"]:6d} {r["tflops"]:8.1f} TFLOP/s  fp32 {100*r["of_cublas_fp32"]:6.1f}%  tf32 {100*r["of_cublas_tf32"]:6.1f}%  err {r["max_relative_error"]:.1e}  vs float64 {r.get("float64_error", -1):.1e}')
PY
  for f in "$out"/gemm_fused*.tsv; do echo "-- $(basename "$f")"; cat "$f"; done
fi

if [[ " $parts " == *" sweep "* ]]; then
  # How the score-tile size moves batched throughput, with the engine's host/device split.
  for mb in ${SWEEP_TILES:-16 32 64 128}; do
    SIMKIT_ENGINE_STATS=1 SIMKIT_GPU_TILE_MB=$mb "$stage"/bin/simkit_bench_neighbors --device cuda \
      --precisions fp16,tf32 --single-reps 5 --batch-reps 5 --check 0 --skip-ceilings \
      > "$out/sweep_$mb.txt" 2> "$out/sweep_$mb.log"
    note "tile $mb MB: $(grep -h 'batch of' "$out/sweep_$mb.log" | sed 's/bench: //' | tr '\n' ' ')"
    note "  engine: $(grep '^engine' "$out/sweep_$mb.log" | tail -n 1)"
  done
  if [ "${SWEEP_NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
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

if [[ " $parts " == *" python "* ]]; then
  py=${PYTHON:-python3}
  if [ ! -d "$stage/python/simkit" ]; then
    note "python: no package staged (gpu-stage.sh found no Python 3.12 with headers; STAGE_PYTHON names one)"
  elif ! PYTHONPATH="$stage/python" "$py" -c 'import simkit' > "$out/python_import.log" 2>&1; then
    note "python: $py ($("$py" -c 'import sys; print(sys.version.split()[0])')) cannot import the package built for $(cat "$stage/python/simkit/built-for.txt"): $(tail -n 1 "$out/python_import.log")"
    failed=1
  else
    export PYTHONPATH="$stage/python${PYTHONPATH:+:$PYTHONPATH}"
    if "$py" -c 'import pytest' 2> /dev/null; then
      (cd python/tests && timeout "$step_timeout" "$py" -m pytest -q -p no:cacheprovider test_gpu.py test_topk.py \
        test_neighbors.py > "$out/python_tests.log" 2>&1)
      status=$?
      note "python tests (GPU part, topk, neighbors): exit $status, $(tail -n 1 "$out/python_tests.log")"
      [ "$status" -eq 0 ] || failed=1
    else
      note "python tests: no pytest for $py"
    fi
    timeout "$step_timeout" "$py" bench/python_overhead.py --cpp "$stage/bin/simkit_bench_calls" --device cuda \
      --rows "${PYTHON_ROWS:-2196016}" --json "$out/python_overhead_gpu.json" > "$out/python_overhead.txt" 2>&1
    status=$?
    note "python overhead (GPU): exit $status"
    [ "$status" -eq 0 ] || failed=1
    cat "$out/python_overhead.txt"
  fi
fi

echo
echo "==== summary"
printf '%s\n' "${summary[@]}" | tee "$final/summary.txt"
[ -f "$out/neighbors_gpu.txt" ] && cat "$out/neighbors_gpu.txt" | tee -a "$final/summary.txt"
for f in dedup_edit_rate.json dedup_recall.json gemm_study.json gemm_fused.tsv gemm_fused_tma0.tsv gemm_fused_tma1.tsv neighbors_gpu.json neighbors_torch.json dedup_gpu.json postings_synthetic.json postings_brown.json disco_gpu.json disco_gpu_py.json disco_torch.json embed_gpu.json lvq_gpu.json lvq_torch.json lvq_fashion.json lvq_dist_1.json lvq_dist_all.json lvq_dist_mpi.json cca_gpu.json cca_gpu_syevj.json cca_gpu_batched.json cca_torch.json python_overhead_gpu.json; do [ -f "$out/$f" ] && cp "$out/$f" "$final/"; done
tar -C "$out" -czf "$final/logs.tar.gz" .
rm -rf "$stage" "$out" "$final/progress.txt"
[ "$failed" -eq 0 ] || echo "gpu-run: FAILED (see the summary above)"
exit "$failed"
