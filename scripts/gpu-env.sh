# Sourced by a device call's script (bash .gpu/callN.sh OUT, run in the repository on the
# GPU machine) and by scripts/gpu-run.sh. Its two functions unpack what
# scripts/gpu-stage.sh staged and set what every GPU run needs:
#   stage_programs DIR  the programs and their libraries (.gpu/stage.tar.xz) into DIR, on
#                       PATH; NCCL, PyTorch and NVSHMEM without NVLink multicast, which the
#                       GPU machines must not use (KINDS.md);
#   stage_mpi DIR       OpenMPI from Debian's packages (.gpu/mpi.tar.xz, where staged) into
#                       DIR, relocated by OPAL_PREFIX, shared memory between the ranks of
#                       this one host; SIMKIT_MPIEXEC names its launcher.
# Sourced with GPU_ENV_FUNCTIONS_ONLY unset, it also stages both into a fresh $st and lists
# the GPUs.

stage_programs() {
  local dir=$1
  tar -C "$dir" -xJf .gpu/stage.tar.xz
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$dir/bin:$PATH"  # simkit and the staged test peers (ssdeep)
  export SIMKIT_SOURCE_DIR=$PWD SIMKIT_BINARY="$dir/bin/simkit" SIMKIT_CLUSTER_PROBE="$dir/bin/simkit_cluster_probe"
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
}

stage_mpi() {
  local dir=$1
  [ -f .gpu/mpi.tar.xz ] || return 0
  tar -C "$dir" -xJf .gpu/mpi.tar.xz
  # Debian names the launcher through its alternatives (mpirun -> mpirun.openmpi -> orterun).
  ln -sf orterun "$dir/mpi/usr/bin/mpirun"
  local lib="$dir/mpi/usr/lib/x86_64-linux-gnu"
  export OPAL_PREFIX="$dir/mpi/usr" PATH="$dir/mpi/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$lib/openmpi/lib:$lib:$lib/libfabric${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 \
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mca_base_component_show_load_errors=0 \
    PMIX_MCA_pcompress_base_silence_warning=1  # (the staged PMIx finds no zlib plugin: a notice a run)
  export SIMKIT_MPIEXEC="$dir/mpi/usr/bin/mpirun"
}

if [ -z "${GPU_ENV_FUNCTIONS_ONLY:-}" ]; then
  st=$(mktemp -d)
  stage_programs "$st"
  stage_mpi "$st"
  nvidia-smi -L
fi
