#!/usr/bin/env bash
# The main jobs on the bundled samples: installs, builds, converts the sample word vectors
# to simkit's memory-mapped format and asks for neighbours and analogies; then finds the
# near-duplicate clusters among the bundled Boost headers, as ssdeep would score them;
# then indexes the bundled Brown sentences and answers a few AND queries; then asks an
# analogy again from Python.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
build/simkit neighbors convert data/samples/vectors.vec -o build/vectors.skv
build/simkit neighbors --model build/vectors.skv --timings \
  water 'king - man + woman' 'father - man + woman' 'brother - man + woman'
echo
echo "near-duplicate clusters (ssdeep score >= 60) among data/samples/boost:"
build/simkit dedup --clusters -t 60 --timings data/samples/boost | sed 's|data/samples/boost/||g' |
  awk -F'\t' 'NR <= 8 { printf "%3d files: %s, %s, ...\n", NF, $1, $2 }'
echo
echo "AND queries over 7,620 Brown Corpus sentences (query_no, count, first sentence ids):"
build/simkit postings build data/samples/postings/brown-sample.txt -o build/brown-sample.skp --timings
printf 'jury election\nthe grand jury said\natlanta mayor\n' |
  build/simkit postings query --index build/brown-sample.skp --queries - --timings | cut -f1-8
echo
echo "the same model from Python (the package simkit in build/python):"
PYTHONPATH=build/python /usr/bin/python3 -c '
import simkit
m = simkit.WordVectors.load("build/vectors.skv")
for word, similarity in m.neighbors("king - man + woman", k=5):
    print(f"  {word:12} {similarity:.6f}")'
