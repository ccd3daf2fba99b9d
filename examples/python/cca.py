#!/usr/bin/env python3
"""Sliding-window canonical correlations: the left and right halves of the digit images,
and a synthetic pair of streams whose coupling switches on half-way."""
import pathlib

import numpy as np

import simkit

digits = pathlib.Path(__file__).resolve().parents[2] / "data" / "samples" / "digits"
rows = np.loadtxt(digits / "train.csv", delimiter=",")
left = [1 + 8 * r + c for r in range(8) for c in range(4)]
right = [1 + 8 * r + c for r in range(8) for c in range(4, 8)]
t = simkit.SlidingCCA(p=32, q=32, window=256, k=3, ridge=1e-3, every=200)
for step, rho in enumerate(t.update(rows[:, left], rows[:, right])):
    print(f"t={256 + 200 * step}: " + " ".join(f"{r:.4f}" for r in rho))

rng = np.random.default_rng(3)
x = rng.standard_normal((2000, 4))
y = rng.standard_normal((2000, 3))
y[1000:, 0] += 2 * x[1000:, 1]  # coupled from t = 1001 on
t = simkit.SlidingCCA(p=4, q=3, window=200, k=1, every=300)
for step, rho in enumerate(t.update(x, y)):
    print(f"synthetic t={200 + 300 * step}: first correlation {rho[0]:.3f}")
