#!/usr/bin/env python3
"""GLVQ on the bundled handwritten digits, as a scikit-learn estimator."""
import pathlib

import numpy as np

import simkit

digits = pathlib.Path(__file__).resolve().parents[2] / "data" / "samples" / "digits"
train = np.loadtxt(digits / "train.csv", delimiter=",", dtype=np.float32)
test = np.loadtxt(digits / "test.csv", delimiter=",", dtype=np.float32)
x, y = train[:, 1:], train[:, 0].astype(int)
xt, yt = test[:, 1:], test[:, 0].astype(int)

glvq = simkit.GLVQ(prototypes_per_class=2, epochs=30).fit(x, y)
print(f"{len(glvq.prototypes_)} prototypes, test accuracy {glvq.score(xt, yt):.4f}")
print(f"loss by epoch: {glvq.loss_curve_[0]:.4f} -> {glvq.loss_curve_[-1]:.4f}")

try:
    from sklearn.model_selection import cross_val_score
    scores = cross_val_score(simkit.GLVQ(epochs=10), x, y, cv=5)
    print(f"5-fold cross-validation: {scores.mean():.4f} +- {scores.std():.4f}")
except ImportError:
    print("(scikit-learn is not installed: no cross-validation)")
