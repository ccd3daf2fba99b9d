# Sourced by a device call's script (bash .gpu/callN.sh OUT, run in the repository on the
# GPU machine): unpacks the programs staged by scripts/gpu-stage.sh into $st and sets what
# every GPU run needs (the staged libraries; NCCL, PyTorch and NVSHMEM without NVLink
# multicast, which the GPU machines must not use), then lists the GPUs.
st=$(mktemp -d)
tar -C "$st" -xJf .gpu/stage.tar.xz
export LD_LIBRARY_PATH=$st/lib:${LD_LIBRARY_PATH:-} SIMKIT_SOURCE_DIR=$PWD SIMKIT_BINARY=$st/bin/simkit SIMKIT_CLUSTER_PROBE=$st/bin/simkit_cluster_probe
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
