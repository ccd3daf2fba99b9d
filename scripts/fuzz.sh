#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, CPU only) into build-fuzz/ and runs
# each one for SECONDS (default 30) from its seed corpus (a copy: the corpus in the
# repository is only added to by hand, when a crash is fixed). Fails on any finding.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMKIT_CUDA=OFF \
  -DSIMKIT_FUZZ=ON -DSIMKIT_TESTS=OFF -DSIMKIT_BENCH=OFF -DSIMKIT_WERROR=ON >/dev/null || exit 1
cmake --build build-fuzz || exit 1
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(glove word2vec_text word2vec_binary npy skv auto query)
dict_of() {
  case "$1" in
    npy) echo fuzz/dict/npy.dict ;;
    skv) echo fuzz/dict/skv.dict ;;
    query) echo fuzz/dict/query.dict ;;
    *) echo fuzz/dict/text.dict ;;
  esac
}
mkdir -p build-fuzz/artifacts build-fuzz/logs
failed=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  cp -r "fuzz/corpus/$t/." "$work/"
  log="build-fuzz/logs/$t.log"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "build-fuzz/fuzz/fuzz_$t" "$work" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -max_len=65536 -dict="$(dict_of "$t")" -print_final_stats=1 \
    -artifact_prefix="build-fuzz/artifacts/$t-" > "$log" 2>&1
  status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
  if [ $status -eq 0 ]; then
    echo "fuzz_$t: ok, ${execs:-?} runs in ${seconds}s, coverage ${cov:-?} edges, ${ft:-?} features"
  else
    echo "fuzz_$t: FAILED (exit $status), see $log; crashing input in build-fuzz/artifacts/"
    grep -E "ERROR|SUMMARY|runtime error|deadly" "$log" | head -n 5
    failed=1
  fi
  rm -rf "$work"
done
exit $failed
