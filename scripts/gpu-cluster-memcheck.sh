#!/usr/bin/env bash
# compute-sanitizer memcheck over the jobs that use several GPUs: every process of a job
# (--target-processes all), --device cuda:all in one process and mpirun -np 2 with a GPU a
# rank. CUDA API errors are not reported (--report-api-errors no): NCCL probes the driver
# with calls that fail by design, about a hundred a run. Run by scripts/gpu-run.sh (part
# cluster-sanitize), which stages the programs, OpenMPI and the environment. Exit 1 when a
# job fails or memcheck reports an error.
set -u
d=$(mktemp -d)
S=data/samples
cs=(compute-sanitizer --tool memcheck --report-api-errors no --target-processes all --error-exitcode 9 --print-limit 5)
mpi=("${SIMKIT_MPIEXEC:-mpirun}" --oversubscribe --bind-to none -q -np 2)
failed=0
simkit disco build $S/postings/brown-sample.txt --words 3000 -o "$d/b.skd" --quiet
simkit postings build $S/postings/brown-sample.txt -o "$d/p.skp" --quiet
check() {
  local name=$1
  shift
  "$@" > "$d/out" 2> "$d/err"
  local status=$?
  echo "memcheck $name: exit $status, $(grep -c 'ERROR SUMMARY: 0 errors' "$d/out") clean process(es)"
  if [ "$status" -ne 0 ]; then
    failed=1
    grep -v 'Host Frame\|^=========                in ' "$d/out" | grep '=====' | head -n 12
    tail -n 2 "$d/err"
  fi
}
check "neighbors cuda:all" "${cs[@]}" simkit neighbors --model $S/vectors.vec --device cuda:all -k 7 king water paris
check "neighbors fp16 cuda:all" "${cs[@]}" simkit neighbors --model $S/vectors.vec --device cuda:all --precision fp16 king water
check "disco --all tf32 cuda:all" "${cs[@]}" simkit disco similar --all --model "$d/b.skd" --features 300 --precision tf32 \
  --kernel cublas --device cuda:all
check "disco --all sparse cuda:all" "${cs[@]}" simkit disco similar --all --model "$d/b.skd" --form sparse --device cuda:all
check "dedup cuda:all" "${cs[@]}" simkit dedup $S/boost --device cuda:all
check "dedup edit-rate cuda:all" "${cs[@]}" simkit dedup --mode edit-rate --rate 0.1 $S/boost --device cuda:all
check "postings query cuda:all" "${cs[@]}" simkit postings query --index "$d/p.skp" --queries $S/postings/queries.txt \
  --device cuda:all
check "lvq train cuda:all" "${cs[@]}" simkit lvq train --train $S/digits/train.csv --test $S/digits/test.csv -p 2 \
  -o "$d/m.skq" --device cuda:all --epochs 2
check "lvq predict cuda:all" "${cs[@]}" simkit lvq predict -m "$d/m.skq" --data $S/digits/test.csv --device cuda:all
check "mpirun -np 2 neighbors" "${mpi[@]}" "${cs[@]}" simkit neighbors --model $S/vectors.vec --device cuda -k 7 king water
check "mpirun -np 2 lvq train" "${mpi[@]}" "${cs[@]}" simkit lvq train --train $S/digits/train.csv -p 2 -o "$d/m2.skq" \
  --device cuda --epochs 2
rm -rf "$d"
exit $failed
