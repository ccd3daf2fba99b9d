#!/usr/bin/env bash
# Call 99 (2026-11-29, 1 x H200), after the review: the code of d0c0445 (the verification's
# pair_bound) tested, and the session's one-call figures measured in a second call.
# - the dedup tests; compute-sanitizer memcheck of GpuVerify.* (quick shapes);
# - the pipeline at 20,000 documents, twice;
# - the folders listed on every core against one walk (w99old/: d0c0445 with
#   src/dedup/files.cpp of f7719f6): the whole edit-rate command on the GPU and on the CPU
#   and `simkit hash -r` of the Boost headers, alternated three times;
# - the process's start against the code before the session (c88/): `postings query` of
#   the Brown Corpus on the CPU and the GPU and a GPU search on the sample model, alternated.
set -u
final=$1
mkdir -p $final
out=$(mktemp -d)
. scripts/gpu-env.sh
tar -C .gpu -xJf .gpu/c88.tar.xz
tar -C .gpu -xJf .gpu/w99old.tar.xz
timeout 200 $st/bin/simkit_dedup_tests > $out/dedup_tests.log 2>&1
echo "simkit_dedup_tests: exit $? $(grep -c '^\[       OK' $out/dedup_tests.log) passed $(grep -c '^\[  FAILED  \] .*(' $out/dedup_tests.log) failed"
grep -A6 ': Failure$' $out/dedup_tests.log | head -20
SIMKIT_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $st/bin/simkit_dedup_tests \
  --gtest_filter='GpuVerify.*' > $out/memcheck.log 2>&1
echo "memcheck GpuVerify.* (quick): exit $? $(grep -E 'ERROR SUMMARY' $out/memcheck.log | tail -1)"
data=$(mktemp -d)
tar -C "$data" -xJf .gpu/boost.tar.xz
tar -C "$data" -xJf .gpu/postings.tar.xz
for r in 1 2; do
  timeout 100 $st/bin/simkit_bench_dedup --docs $data/boost --sizes 20000 --scratch $data/copies --kernel-strings 500 \
    --device cuda --no-cpu-pipeline --reps 3 > $out/bench_$r.log 2>&1
  echo "bench $r: $(grep 'bench: edit rate' $out/bench_$r.log | grep -o '"gpu_stages_s":\[[^]]*\]\|"gpu_wall_s":[0-9.]*\|"pairs_found":[0-9]*' | tr '\n' ' ')"
done
wall() { local s0=$(date +%s.%N); "$@"; local s=$?; echo "$(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s0}") (exit $s)"; }
for d in cuda cpu; do
  for r in 1 2 3; do
    [ $d = cpu ] && [ $r = 3 ] && break
    for w in onewalk final; do
      bin=$([ $w = onewalk ] && echo .gpu/w99old/simkit || echo $st/bin/simkit)
      t=$(wall $bin dedup --mode edit-rate "$data/boost" "$data/copies" --device $d --timings --quiet -o "$data/${w}_$d$r.tsv" 2> $out/${w}_$d$r.log)
      echo "dedup $d $w $r: $t s; $(grep -h timing $out/${w}_$d$r.log | sed 's/^simkit: timing: //' | grep -o 'found [0-9]* inputs in [0-9.]* s\|[0-9.]* s in all' | tr '\n' ' ')"
    done
  done
done
for f in final_cuda1 onewalk_cuda2 final_cuda2 onewalk_cuda3 final_cuda3 onewalk_cpu1 final_cpu1 onewalk_cpu2 final_cpu2; do
  cmp -s "$data/onewalk_cuda1.tsv" "$data/$f.tsv" || echo "$f DIFFERS"
done
for r in 1 2 3; do
  for w in onewalk final; do
    bin=$([ $w = onewalk ] && echo .gpu/w99old/simkit || echo $st/bin/simkit)
    echo "hash -r boost $w $r: $(wall $bin hash -r "$data/boost" -o $out/hash_$w.txt) s"
  done
done
cmp -s $out/hash_onewalk.txt $out/hash_final.txt && echo "hash lists equal" || echo "hash lists DIFFER"
rm -f $out/hash_*.txt
$st/bin/simkit postings build "$data/postings/brown.txt" -o "$data/brown.skp" --quiet
for d in cpu cuda; do
  for w in c88 final; do
    bin=$([ $w = c88 ] && echo .gpu/c88/simkit || echo $st/bin/simkit)
    times=""
    for i in 1 2 3 4 5; do
      times="$times $(wall $bin postings query --index "$data/brown.skp" --queries "$data/postings/brown-queries.txt" --device $d -o $out/p_${w}_$d.txt)"
    done
    echo "postings query $d $w:$times"
  done
  cmp -s $out/p_c88_$d.txt $out/p_final_$d.txt && echo "postings $d outputs equal" || echo "postings $d outputs DIFFER"
done
rm -f $out/p_*.txt
for r in 1 2 3; do
  for w in c88 final; do
    bin=$([ $w = c88 ] && echo .gpu/c88/simkit || echo $st/bin/simkit)
    echo "neighbors cuda $w $r: $(wall $bin neighbors --model data/samples/vectors.vec --device cuda king "king - man + woman" -o $out/n_$w.txt 2>/dev/null)"
  done
done
cmp -s $out/n_c88.txt $out/n_final.txt && echo "neighbors outputs equal" || echo "neighbors outputs DIFFER"
tar -C $out -czf $final/logs.tgz .
