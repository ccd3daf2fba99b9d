#!/usr/bin/env bash
# Installs what simkit needs from Debian 12's packages (as root, or through sudo).
#   setup.sh           build, tests (the Python package's too) and the demo
#   setup.sh --bench   also the CPU peers for benchmarks (FAISS, OpenMP OpenBLAS) and
#                      their data (the Boost headers for near-duplicate detection, Fashion-MNIST
#                      and scikit-learn's digits for LVQ)
#   setup.sh --samples also what scripts/make-sample-vectors.sh and sample-corpus.py need
#                      (fastText, texts, the Python 3.11 documentation)
# Installs only what is missing, so a second run costs nothing.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config python3
  libcli11-dev libfmt-dev nlohmann-json3-dev libxxhash-dev libtbb-dev libopenblas-dev libeigen3-dev
  libicu-dev libroaring-dev zlib1g-dev libbz2-dev libzstd-dev libexpat1-dev
  openmpi-bin libopenmpi-dev  # several processes as one run (mpirun), include/simkit/cluster.hpp
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  ssdeep libfuzzy-dev  # the reference that the CTPH tests compare with (never linked into simkit)
  pybind11-dev python3-dev  # the Python package; its tests run under Debian's python3 with:
  python3-numpy python3-pytest python3-sklearn python3-ssdeep)
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(python3-faiss libopenblas0-openmp hyperfine libboost1.74-dev dataset-fashion-mnist) ;;
    --samples) packages+=(fasttext bible-kjv wordnet-base python3.11-doc) ;;
    *) echo "setup.sh: unknown option $arg (use --bench or --samples)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
