"""simkit.topk (the pairwise engine) against NumPy brute force."""
import numpy as np
import pytest

import simkit
from conftest import check_topk


def brute_force(a, b, metric):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    if metric == "dot":
        return a @ b.T
    if metric == "cosine":
        na = np.linalg.norm(a, axis=1, keepdims=True)
        nb = np.linalg.norm(b, axis=1, keepdims=True)
        return (a / np.where(na > 0, na, 1)) @ (b / np.where(nb > 0, nb, 1)).T
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2)


@pytest.mark.parametrize("metric", ["dot", "cosine", "l2"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 3000, 17), (64, 777, 32), (300, 200, 5)])
def test_random_rows_equal_brute_force(rng, metric, shape):
    m, n, dim = shape
    a = rng.standard_normal((m, dim)).astype(np.float32)
    b = rng.standard_normal((n, dim)).astype(np.float32)
    k = min(10, n + 2)
    scores, indices = simkit.topk(a, b, k=k, metric=metric, device="cpu")
    assert scores.dtype == np.float32 and indices.dtype == np.int64
    check_topk(scores, indices, brute_force(a, b, metric), k, smallest_first=metric == "l2", tol=2e-5)
    if k > n:  # the empty slots
        assert np.all(np.isposinf(scores[:, n:]) if metric == "l2" else np.isneginf(scores[:, n:]))


@pytest.mark.parametrize("metric", ["dot", "cosine", "l2"])
def test_ties_go_to_the_lower_index(rng, metric):
    # Small integers: every product is exact in float32, and ties are many.
    a = rng.integers(-2, 3, size=(40, 6)).astype(np.float32)
    b = rng.integers(-2, 3, size=(500, 6)).astype(np.float32)
    b[100:200] = b[:100]  # duplicates: equal scores at two indices
    scores, indices = simkit.topk(a, b, k=15, metric=metric, device="cpu")
    full = brute_force(a, b, metric)
    key = full if metric == "l2" else -full
    if metric == "cosine":  # rounding of the norms may split ties; compare the scores only
        check_topk(scores, indices, full, 15, tol=1e-6)
        return
    want = np.lexsort((np.broadcast_to(np.arange(500), full.shape), key), axis=1)[:, :15]
    np.testing.assert_array_equal(indices, want)
    np.testing.assert_array_equal(scores, np.take_along_axis(full, want, axis=1).astype(np.float32))


def test_zero_rows_score_zero_in_cosine():
    a = np.array([[0, 0], [1, 0]], dtype=np.float32)
    b = np.array([[0, 0], [0, 1], [2, 0]], dtype=np.float32)
    scores, indices = simkit.topk(a, b, k=3, metric="cosine", device="cpu")
    np.testing.assert_array_equal(indices, [[0, 1, 2], [2, 0, 1]])
    np.testing.assert_array_equal(scores, [[0, 0, 0], [1, 0, 0]])


def test_inputs_are_converted_once_when_needed(rng):
    a = rng.standard_normal((20, 16))
    b = rng.standard_normal((100, 16))
    want = simkit.topk(a.astype(np.float32), b.astype(np.float32), k=4, device="cpu")
    for x, y in [(a, b), (a.tolist(), b.tolist()), (np.asfortranarray(a), b[::1]),
                 (a.astype(np.float32)[:, :], np.ascontiguousarray(b.astype(np.float32).T).T)]:
        got = simkit.topk(x, y, k=4, device="cpu")
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    scores, indices = simkit.topk(np.zeros((0, 16), np.float32), b, k=4, device="cpu")
    assert scores.shape == indices.shape == (0, 4)


@pytest.mark.parametrize("kwargs, message", [
    (dict(A=np.zeros((2, 3)), B=np.zeros((4, 5))), "expected 3 columns"),
    (dict(A=np.zeros(3), B=np.zeros((4, 3))), "expected a 2-D array"),
    (dict(A=np.zeros((2, 3, 1)), B=np.zeros((4, 3))), "expected a 2-D array"),
    (dict(A=np.zeros((2, 3), dtype=complex), B=np.zeros((4, 3))), "expected real numbers"),
    (dict(A=np.zeros((2, 3)), B=np.zeros((4, 3)), metric="manhattan"), "expected dot, cosine or l2"),
    (dict(A=np.zeros((2, 3)), B=np.zeros((4, 3)), k=0), "at least 1"),
    (dict(A=np.zeros((2, 0)), B=np.zeros((4, 0))), "no columns"),
    (dict(A=np.zeros((2, 3)), B=np.zeros((4, 3)), device="gpu:x"), "device"),
])
def test_bad_arguments_raise_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simkit.topk(**kwargs)
