"""Shared fixtures of simkit's Python tests: the repository's data, the built `simkit`
program (SIMKIT_BINARY, set by CTest) for answers to compare with, seeded random data."""
import os
import pathlib
import random
import subprocess

import numpy as np
import pytest

import simkit

SOURCE = pathlib.Path(os.environ.get("SIMKIT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SAMPLES = SOURCE / "data" / "samples"
BINARY = os.environ.get("SIMKIT_BINARY", str(SOURCE / "build" / "simkit"))

requires_gpu = pytest.mark.skipif(simkit.cuda_device_count() == 0, reason="no GPU (or a CPU-only build)")


def run_cli(*args, check=True):
    """Runs the simkit program; returns its standard output (a failure shows stderr)."""
    done = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"simkit {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def cli_error(*args):
    """The error line the simkit program prints for bad input (exit 2), without its prefix."""
    done = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 2, f"exit {done.returncode}: {done.stderr}"
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("simkit: error: "), line
    return line[len("simkit: error: "):]


def tsv(text):
    return [line.split("\t") for line in text.splitlines() if line]


@pytest.fixture
def rng():
    """A NumPy generator seeded from SIMKIT_TEST_SEED or afresh; the seed is printed, so a
    failing test shows it."""
    seed = int(os.environ.get("SIMKIT_TEST_SEED", random.SystemRandom().randrange(1 << 32)))
    print(f"random seed {seed} (SIMKIT_TEST_SEED={seed} repeats it)")
    return np.random.default_rng(seed)


def check_topk(scores, indices, full, k, smallest_first=False, tol=1e-5):
    """Checks (scores, indices) against the full score matrix `full` (float64): each row's
    scores are the k best of the row in order, each index's score is its true score, and
    indices differ from the exact order only among near-equal scores."""
    full = np.asarray(full, dtype=np.float64)
    rows, cols = full.shape
    assert scores.shape == indices.shape == (rows, k)
    key = full if smallest_first else -full
    order = np.lexsort((np.broadcast_to(np.arange(cols), full.shape), key), axis=1)[:, :k]
    want = np.take_along_axis(full, order, axis=1)
    filled = min(k, cols)
    scale = max(1.0, float(np.abs(full).max(initial=0)))
    np.testing.assert_allclose(scores[:, :filled], want[:, :filled], rtol=0, atol=tol * scale)
    np.testing.assert_allclose(np.take_along_axis(full, indices[:, :filled], axis=1), want[:, :filled], rtol=0,
                               atol=tol * scale)
    for r in range(rows):  # the same rows, except where neighbouring scores nearly tie
        differ = indices[r, :filled] != order[r, :filled]
        if differ.any():
            gaps = np.abs(np.diff(want[r, :filled]))
            assert np.all(np.abs(want[r, :filled][differ] - scores[r, :filled][differ]) <= tol * scale)
            assert gaps.min(initial=np.inf) <= 2 * tol * scale, f"row {r}: {indices[r]} vs {order[r]}"
    assert len(set(indices[0, :filled].tolist())) == filled  # no row twice
    if k > cols:
        assert np.all(indices[:, cols:] == -1)
