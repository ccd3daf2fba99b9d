#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, CPU only) into build-fuzz/ and runs
# each one for SECONDS (default 30) from a copy of its seed corpus (fuzz/corpus/<target>/,
# written by fuzz/make-corpus.py) plus every input that once crashed it
# (fuzz/regressions/<target>/, added by hand when the crash is fixed). Fails on any finding.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
# FUZZ_NO_BUILD=1 skips the build (parallel runs of this script over one build-fuzz/).
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMKIT_CUDA=OFF \
    -DSIMKIT_FUZZ=ON -DSIMKIT_TESTS=OFF -DSIMKIT_BENCH=OFF -DSIMKIT_WERROR=ON >/dev/null || exit 1
  cmake --build build-fuzz || exit 1
fi
targets=("$@")
# By default every fuzz_* target the build made (fuzz/CMakeLists.txt lists them).
if [ ${#targets[@]} -eq 0 ]; then
  for bin in build-fuzz/fuzz/fuzz_*; do targets+=("${bin##*/fuzz_}"); done
fi
# fuzz/dict/<target>.dict when the format has its own keywords, else the text formats' one.
dict_of() {
  if [ -f "fuzz/dict/$1.dict" ]; then echo "fuzz/dict/$1.dict"; else echo fuzz/dict/text.dict; fi
}
mkdir -p build-fuzz/artifacts build-fuzz/logs
failed=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  cp -r "fuzz/corpus/$t/." "$work/"
  [ -d "fuzz/regressions/$t" ] && cp -r "fuzz/regressions/$t/." "$work/"
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
