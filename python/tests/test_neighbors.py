"""simkit.WordVectors against the `simkit neighbors` program and NumPy brute force."""
import threading

import numpy as np
import pytest

import simkit
from conftest import SAMPLES, check_topk, cli_error, run_cli, tsv

VECTORS = SAMPLES / "vectors.vec"
QUERIES = ["king", "king - man + woman", "paris - france + italy", "water", "good"]


@pytest.fixture(scope="module")
def model():
    return simkit.WordVectors.load(VECTORS)


def test_loads_the_words_and_a_read_only_view(model):
    assert len(model) == 4000 and model.dim == 100 and model.format == "word2vec"
    words = model.words
    assert len(words) == 4000 and words[0] == "the" and model.index("king") == words.index("king")
    assert "king" in model and "no-such-word" not in model
    v = model.vectors
    assert v.dtype == np.float32 and v.shape == (4000, 100) and v.flags.c_contiguous
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0, 0] = 1
    np.testing.assert_array_equal(model["king"], v[model.index("king")])
    with pytest.raises(KeyError):
        model.index("no-such-word")
    # The first row as the file writes it.
    first = VECTORS.read_text().splitlines()[1].split()
    assert first[0] == "the"
    np.testing.assert_array_equal(v[0], np.array(first[1:], dtype=np.float32))


def test_neighbors_equal_the_command_line(model):
    want = tsv(run_cli("neighbors", "--model", VECTORS, "--format", "tsv", "--device", "cpu", "-k", 7, *QUERIES))
    got = []
    for query, answer in zip(QUERIES, model.neighbors(QUERIES, k=7, device="cpu")):
        # One at a time (a matrix-vector product, not a matrix product): the same to rounding.
        alone = model.neighbors(query, k=7, device="cpu")
        np.testing.assert_allclose([s for _, s in alone], [s for _, s in answer], rtol=0, atol=1e-6)
        text = " ".join(query.split())
        got += [[text, str(rank), word, f"{similarity:.6f}"] for rank, (word, similarity) in enumerate(answer, 1)]
    assert got == want


def test_neighbors_of_a_word_are_its_cosine_top_k_without_itself(model):
    unit = model.vectors / np.linalg.norm(model.vectors, axis=1, keepdims=True)
    row = model.index("water")
    scores = unit.astype(np.float64) @ unit[row]
    scores[row] = -np.inf
    got = model.neighbors("water", k=10, device="cpu")
    assert [w for w, _ in got] == [model.words[i] for i in np.argsort(-scores, kind="stable")[:10]]
    np.testing.assert_allclose([s for _, s in got], np.sort(scores)[::-1][:10], atol=1e-5)


def test_gpu_split_is_checked_and_leaves_the_cpus_answers_alone(model, rng):
    queries = rng.standard_normal((9, model.dim)).astype(np.float32)
    want = model.search(queries, k=5, device="cpu")
    for split in ("auto", "rows", "queries"):  # one CPU: nothing to share, the same answers
        got = model.search(queries, k=5, device="cpu", gpu_split=split)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
    with pytest.raises(ValueError, match="gpu-split"):
        model.neighbors("water", device="cpu", gpu_split="columns")


def test_search_equals_brute_force(model, rng):
    queries = rng.standard_normal((37, model.dim)).astype(np.float32)
    scores, indices = model.search(queries, k=12, device="cpu")
    assert scores.dtype == np.float32 and indices.dtype == np.int64
    unit = model.vectors / np.linalg.norm(model.vectors.astype(np.float64), axis=1, keepdims=True)
    check_topk(scores, indices, queries.astype(np.float64) @ unit.T, 12)
    # float64 and Fortran-ordered queries are converted once; the answers are the same.
    s64, i64 = model.search(np.asfortranarray(queries.astype(np.float64)), k=12, device="cpu")
    np.testing.assert_array_equal(i64, indices)
    np.testing.assert_array_equal(s64, scores)


def test_search_of_the_model_rows_finds_themselves(model):
    rows = np.ascontiguousarray(model.vectors[:50])
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    scores, indices = model.search(unit, k=1, device="cpu")
    np.testing.assert_array_equal(indices[:, 0], np.arange(50))
    np.testing.assert_allclose(scores[:, 0], 1, atol=1e-5)


def test_search_past_the_rows_and_of_nothing():
    small = simkit.WordVectors.from_vectors(["a", "b", "c"], np.eye(3, dtype=np.float32))
    scores, indices = small.search(np.array([[1, 0.5, 0]], dtype=np.float32), k=5, device="cpu")
    np.testing.assert_array_equal(indices, [[0, 1, 2, -1, -1]])
    np.testing.assert_array_equal(scores[0, :3], [1, 0.5, 0])
    assert np.all(np.isneginf(scores[0, 3:]))
    scores, indices = small.search(np.zeros((0, 3), dtype=np.float32), k=2)
    assert scores.shape == indices.shape == (0, 2)


def test_from_vectors_and_saved_models(model, tmp_path):
    words = model.words[:100]
    small = simkit.WordVectors.from_vectors(words, model.vectors[:100])
    assert small.words == words
    np.testing.assert_array_equal(small.vectors, model.vectors[:100])
    small.save(tmp_path / "small.skv")
    mapped = simkit.WordVectors.load(tmp_path / "small.skv")
    assert mapped.format == "skv" and not mapped.vectors.flags.writeable
    np.testing.assert_array_equal(mapped.vectors, model.vectors[:100])
    assert mapped.neighbors(words[50], k=5, device="cpu") == small.neighbors(words[50], k=5, device="cpu")
    # An .npy matrix with its word list, as `simkit neighbors --words` reads it.
    np.save(tmp_path / "small.npy", model.vectors[:100])
    (tmp_path / "small.txt").write_text("\n".join(words) + "\n")
    npy = simkit.WordVectors.load(tmp_path / "small.npy", words=tmp_path / "small.txt")
    assert npy.format == "npy" and npy.words == words


def test_concurrent_searches_give_the_serial_answers(model, rng):
    queries = [rng.standard_normal((64, model.dim)).astype(np.float32) for _ in range(4)]
    serial = [model.search(q, k=5, device="cpu") for q in queries]
    results = [None] * 4

    def work(i):
        results[i] = model.search(queries[i], k=5, device="cpu")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (s, i), (s2, i2) in zip(serial, results):
        np.testing.assert_array_equal(i, i2)
        np.testing.assert_array_equal(s, s2)


def test_bad_queries_raise_the_command_lines_errors(model):
    with pytest.raises(simkit.InputError) as error:
        model.neighbors("king - qqqzzz", device="cpu")
    assert str(error.value) == cli_error("neighbors", "--model", VECTORS, "--device", "cpu", "king - qqqzzz")
    assert isinstance(error.value, ValueError)
    with pytest.raises(ValueError, match="ends with an operator"):
        model.neighbors("king -", device="cpu")
    with pytest.raises(ValueError, match="empty"):
        model.neighbors([], device="cpu")
    with pytest.raises(ValueError, match="at least 1"):
        model.neighbors("king", k=0, device="cpu")
    with pytest.raises(simkit.UsageError) as error:
        model.neighbors("king", device="tpu")
    assert str(error.value) == cli_error("neighbors", "--model", VECTORS, "--device", "tpu", "king")


@pytest.mark.parametrize("queries, message", [
    (np.zeros((3, 99), dtype=np.float32), "expected 100 columns"),
    (np.zeros(100, dtype=np.float32), "expected a 2-D array"),
    (np.zeros((2, 100), dtype=np.complex64), "expected real numbers"),
    (np.array([["a"] * 100]), "expected real numbers"),
])
def test_bad_query_arrays_raise_value_errors(model, queries, message):
    with pytest.raises(ValueError, match=message):
        model.search(queries, k=3, device="cpu")


def test_missing_and_malformed_models(tmp_path):
    missing = tmp_path / "missing.vec"
    with pytest.raises(FileNotFoundError) as error:
        simkit.WordVectors.load(missing)
    assert error.value.strerror == cli_error("neighbors", "--model", missing, "king")
    with pytest.raises(IsADirectoryError):
        simkit.WordVectors.load(tmp_path)
    bad = tmp_path / "bad.vec"
    bad.write_text("2 3\na 1 2 3\nb 1 2\n")
    with pytest.raises(simkit.InputError) as error:
        simkit.WordVectors.load(bad)
    assert str(error.value) == cli_error("neighbors", "--model", bad, "a")
