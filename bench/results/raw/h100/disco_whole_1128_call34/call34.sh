#!/usr/bin/env bash
# Call 34 (2026-11-28, 1 x H100, 16 cores): a second call of the 100,000-word disco command
# (TF32, whole command, three times), so that goal 2's H100 figure rests on two calls.
set -u
out=$1
. scripts/gpu-env.sh
nproc
for r in 1 2 3; do
  WHOLE_JOBS=disco WHOLE_CPU=0 timeout 200 bash bench/whole_commands.sh $out/whole_disco_$r > $out/whole_disco_$r.txt 2>&1
  echo "disco 100k TF32 run $r: $(grep -P '^disco\t' $out/whole_disco_$r/whole_commands.tsv | cut -f1-4)"
  grep -h "timing" $out/whole_disco_$r/whole_disco_cuda.log | cut -c1-130 | sed "s/^/  run $r: /"
done
