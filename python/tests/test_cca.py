"""simkit.SlidingCCA against the `simkit cca` program and a NumPy CCA of each window."""
import numpy as np
import pytest

import simkit
from conftest import SAMPLES, cli_error, run_cli, tsv

TRAIN = SAMPLES / "digits" / "train.csv"
X_COLUMNS = [c for start in range(1, 64, 8) for c in range(start, start + 4)]   # 1-4, 9-12, ...
Y_COLUMNS = [c + 4 for c in X_COLUMNS]                                        # 5-8, 13-16, ...


def ranges(columns):
    return ",".join(f"{c}-{c + 3}" for c in columns[::4])


def numpy_cca(x, y, k):
    """The canonical correlations of one window: singular values of Lx^-1 Sxy Ly^-T."""
    x = x - x.mean(axis=0)
    y = y - y.mean(axis=0)
    lx = np.linalg.cholesky(x.T @ x)
    ly = np.linalg.cholesky(y.T @ y)
    kxy = np.linalg.solve(lx, np.linalg.solve(ly, (x.T @ y).T).T)
    return np.linalg.svd(kxy, compute_uv=False)[:k]


def test_reports_equal_the_command_line():
    rows = np.loadtxt(TRAIN, delimiter=",")
    want = tsv(run_cli("cca", "--input", TRAIN, "--x", ranges(X_COLUMNS), "--y", ranges(Y_COLUMNS), "--window", 256,
                       "--k", 3, "--ridge", "1e-3", "--every", 200, "--device", "cpu"))
    tracker = simkit.SlidingCCA(p=32, q=32, window=256, k=3, ridge=1e-3, every=200, device="cpu")
    got = tracker.update(rows[:, X_COLUMNS], rows[:, Y_COLUMNS])
    assert got.shape == (len(want), 3) and len(want) == 6 and tracker.tuples == len(rows)
    for i, (line, rho) in enumerate(zip(want, got)):
        assert int(line[0]) == 256 + 200 * i
        np.testing.assert_allclose(rho, np.array(line[1:], dtype=np.float64), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(tracker.correlations(), got[-1])


def test_windows_equal_a_numpy_cca(rng):
    n, p, q, window = 400, 3, 4, 50
    x = rng.standard_normal((n, p))
    y = 0.6 * x @ rng.standard_normal((p, q)) + rng.standard_normal((n, q))
    tracker = simkit.SlidingCCA(p, q, window, k=3, device="cpu")
    reports = []
    for t in range(n):  # one tuple at a time
        rho = tracker.update(x[t], y[t])
        assert (rho is None) == (t + 1 < window)
        if rho is not None:
            reports.append(rho)
            np.testing.assert_allclose(rho, numpy_cca(x[t + 1 - window:t + 1], y[t + 1 - window:t + 1], 3), atol=1e-9)
    assert len(reports) == n - window + 1
    # The same tuples in batches give the same reports.
    again = simkit.SlidingCCA(p, q, window, k=3, device="cpu")
    batched = np.concatenate([again.update(x[s:s + 64], y[s:s + 64]) for s in range(0, n, 64)])
    np.testing.assert_allclose(batched, np.array(reports), atol=1e-12)
    assert simkit.SlidingCCA(p, q, window, device="cpu").correlations() is None
    # k past the smaller side gives the smaller side's number of correlations, before and after.
    wide = simkit.SlidingCCA(p, q, window, k=10, device="cpu")
    assert wide.update(x[:10], y[:10]).shape == (0, p)
    assert wide.update(x[10:60], y[10:60]).shape == (11, p)


def test_bad_inputs_raise_value_errors():
    tracker = simkit.SlidingCCA(2, 2, 10, device="cpu")
    with pytest.raises(ValueError, match="2 values a tuple"):
        tracker.update(np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match="one tuple"):
        tracker.update(np.zeros(2), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="tuples"):
        tracker.update(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="real numbers"):
        tracker.update(np.array(["a", "b"]), np.zeros(2))
    with pytest.raises(simkit.UsageError) as error:
        simkit.SlidingCCA(2, 2, 1, device="cpu")
    assert str(error.value) == cli_error("cca", "--input", TRAIN, "--x", "0-1", "--y", "2-3", "--window", 1)
    singular = simkit.SlidingCCA(2, 2, 5, device="cpu")
    with pytest.raises(simkit.InputError, match="singular|ridge"):
        singular.update(np.ones((10, 2)), np.ones((10, 2)))
