#!/usr/bin/env python3
"""Nearest words and analogies over the bundled word vectors, then FAISS-style search of
raw vectors. Run from anywhere: PYTHONPATH=build/python python3 examples/python/neighbors.py"""
import pathlib

import numpy as np

import simkit

samples = pathlib.Path(__file__).resolve().parents[2] / "data" / "samples"
m = simkit.WordVectors.load(samples / "vectors.vec")
print(f"{len(m)} words x {m.dim} dimensions")

for query in ["king", "king - man + woman", "paris - france + italy"]:
    answer = m.neighbors(query, k=5)
    print(f"{query}: " + ", ".join(f"{word} {similarity:.3f}" for word, similarity in answer))

# The vectors of three words as queries: each finds itself first.
queries = np.stack([m["water"], m["music"], m["money"]])
queries /= np.linalg.norm(queries, axis=1, keepdims=True)
scores, indices = m.search(queries, k=3)
for row, score in zip(indices, scores):
    print(" ".join(f"{m.words[i]}({s:.2f})" for i, s in zip(row, score)))
