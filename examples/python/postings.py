#!/usr/bin/env python3
"""Posting lists: an index of Brown Corpus sentences and a batch of AND queries."""
import pathlib

import numpy as np

import simkit

samples = pathlib.Path(__file__).resolve().parents[2] / "data" / "samples" / "postings"
sentences = (samples / "brown-sample.txt").read_text(encoding="utf-8").splitlines()
index = simkit.PostingsIndex.build(sentences)
print(index)

answers = index.query(["jury said", "city council", "president kennedy"])
for query, ids in zip(["jury said", "city council", "president kennedy"], answers):
    print(f"{query!r}: {len(ids)} sentences, first: {sentences[ids[0]][:70]!r}" if len(ids) else f"{query!r}: none")

# The same by hand: the lists of the words, intersected.
lists = [index.list(index.term(w)) for w in ("jury", "said")]
print("intersect agrees:", bool(np.array_equal(simkit.intersect(lists), answers[0])))
