#!/usr/bin/env bash
# Call 67 (2026-11-28, the 2-GPU kind): what a one-GPU command pays for the GPUs it does
# not use. disco 200k x 10k TF32 on GPU 0 with both GPUs visible and with only GPU 0
# (CUDA_VISIBLE_DEVICES=0), alternated three times; mpirun -np 2 with each rank seeing
# every GPU and with each rank seeing only its own (a wrapper), alternated twice.
set -u
out=$1
mkdir -p $out
. scripts/gpu-env.sh
tar -C $st -xJf .gpu/mpi.tar.xz
ln -sf orterun $st/mpi/usr/bin/mpirun
export OPAL_PREFIX=$st/mpi/usr PATH=$st/mpi/usr/bin:$st/bin:$PATH
export LD_LIBRARY_PATH=$st/mpi/usr/lib/x86_64-linux-gnu/openmpi/lib:$st/mpi/usr/lib/x86_64-linux-gnu:$st/mpi/usr/lib/x86_64-linux-gnu/libfabric:$LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mca_base_component_show_load_errors=0 \
  PMIX_MCA_pcompress_base_silence_warning=1
d=$(mktemp -d)
$st/bin/simkit_bench_disco --sizes 200000 --features 10000 --write-model $d/disco.skd > /dev/null 2>&1
cmd=(disco similar --all --model $d/disco.skd --features 10000 --k 10 --precision tf32 --kernel cublas --timings --quiet)
cat > $d/own_gpu.sh <<'W'
#!/bin/sh
export CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK
exec "$@"
W
chmod +x $d/own_gpu.sh
t() { local s=$(date +%s.%N); "$@" > /dev/null 2>> $d/log; echo "exit $? wall $(awk "BEGIN {printf \"%.3f\", $(date +%s.%N) - $s}")"; }
for r in 1 2 3; do
  echo "one GPU, both visible, run $r: $(t simkit "${cmd[@]}" --device cuda:0 -o $d/a) | $(grep -E 'waited' $d/log | tail -1)"
  echo "one GPU, GPU 0 visible, run $r: $(t env CUDA_VISIBLE_DEVICES=0 simkit "${cmd[@]}" --device cuda:0 -o $d/b) | $(grep -E 'waited' $d/log | tail -1)"
  cmp -s $d/a $d/b || echo "OUTPUTS DIFFER"
done
for r in 1 2; do
  echo "mpirun -np 2, every GPU visible, run $r: $(t mpirun --bind-to none -np 2 simkit "${cmd[@]}" --device cuda -o $d/c) | $(grep -E 'all pairs of' $d/log | tail -1 | cut -c1-160)"
  echo "mpirun -np 2, own GPU visible, run $r: $(t mpirun --bind-to none -np 2 $d/own_gpu.sh simkit "${cmd[@]}" --device cuda -o $d/e) | $(grep -E 'all pairs of' $d/log | tail -1 | cut -c1-160)"
  cmp -s $d/a $d/c && cmp -s $d/a $d/e || echo "MPI OUTPUTS DIFFER"
done
cp $d/log $out/stderr.log
