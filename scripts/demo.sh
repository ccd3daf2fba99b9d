#!/usr/bin/env bash
# The main job on the bundled sample: installs, builds, converts the sample word vectors
# to simkit's memory-mapped format, and asks for neighbours and analogies.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
build/simkit neighbors convert data/samples/vectors.vec -o build/vectors.skv
build/simkit neighbors --model build/vectors.skv --timings \
  water 'king - man + woman' 'father - man + woman' 'brother - man + woman'
