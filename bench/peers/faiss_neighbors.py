#!/usr/bin/env python3
"""The CPU peer: FAISS IndexFlatIP (exact inner product) over unit vectors of the seed's
size, one query at a time and in batches; medians of fresh random queries.
Needs Debian's python3-faiss (with libopenblas0-openmp for a fast BLAS).

Usage: /usr/bin/python3 faiss_neighbors.py [--rows N] [--dim D] [--batch B] [--json OUT]
"""
import argparse
import json
import os
import statistics
import time

import faiss
import numpy as np


def unit(rng, rows, dim):
    x = rng.standard_normal((rows, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=2_196_016)
    p.add_argument("--dim", type=int, default=300)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--single-reps", type=int, default=10)
    p.add_argument("--batch-reps", type=int, default=3)
    p.add_argument("--json")
    a = p.parse_args()
    rng = np.random.default_rng(42)
    index = faiss.IndexFlatIP(a.dim)
    for start in range(0, a.rows, 1 << 18):
        index.add(unit(rng, min(1 << 18, a.rows - start), a.dim))
    threads = faiss.omp_get_max_threads()

    def timed(make, reps):
        times = []
        index.search(make(), a.k)  # warm-up
        for _ in range(reps):
            q = make()
            t0 = time.perf_counter()
            index.search(q, a.k)
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    single = timed(lambda: unit(rng, 1, a.dim), a.single_reps)
    batch = timed(lambda: unit(rng, a.batch, a.dim), a.batch_reps)
    out = {"faiss": faiss.__version__, "threads": threads, "rows": a.rows, "dim": a.dim,
           "single_ms": single, "batch": a.batch, "batch_ms": batch, "queries_per_s": a.batch / (batch / 1e3)}
    print(f"faiss {faiss.__version__} ({threads} threads): one query {single:.1f} ms, "
          f"batch of {a.batch} {batch:.0f} ms = {a.batch / (batch / 1e3):.1f} queries/s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
