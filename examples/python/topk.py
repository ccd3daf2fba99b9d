#!/usr/bin/env python3
"""Top-k search over any vectors with simkit.topk: cosine, dot product or squared
Euclidean distance, checked here against NumPy brute force."""
import numpy as np

import simkit

rng = np.random.default_rng(7)
base = rng.standard_normal((20_000, 64), dtype=np.float32)
queries = base[:5] + 0.1 * rng.standard_normal((5, 64), dtype=np.float32)  # near rows 0..4

for metric in ("cosine", "dot", "l2"):
    scores, indices = simkit.topk(queries, base, k=3, metric=metric)
    best = " ".join(f"{s:.3f}" for s in scores[:, 0])
    print(f"{metric:6}: nearest rows {indices[:, 0].tolist()}, their scores {best}")

distances = ((queries[:, None, :] - base[None, :, :]) ** 2).sum(axis=2)
_, indices = simkit.topk(queries, base, k=3, metric="l2")
print("l2 lists equal NumPy's:", bool(np.array_equal(indices, np.argsort(distances, axis=1)[:, :3])))
