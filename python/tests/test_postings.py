"""simkit.intersect and simkit.PostingsIndex against NumPy and the `simkit postings` program."""
import functools

import numpy as np
import pytest

import simkit
from conftest import SAMPLES, cli_error, run_cli, tsv

BROWN = SAMPLES / "postings" / "brown-sample.txt"
QUERIES = SAMPLES / "postings" / "queries.txt"
ALGORITHMS = ["auto", "svs", "adaptive", "hash", "galloping", "simd", "bitmap"]


def sorted_ids(rng, count, universe):
    return np.sort(rng.choice(universe, size=count, replace=False)).astype(np.uint32)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_intersect_equals_numpy(rng, algorithm):
    for lists in ([sorted_ids(rng, n, 200_000) for n in (5000, 60_000, 150_000)],
                  [sorted_ids(rng, n, 1000) for n in (1, 999, 500, 700)],
                  [sorted_ids(rng, 300, 10_000)],
                  [sorted_ids(rng, 100, 10_000), np.array([], dtype=np.uint32)]):
        got = simkit.intersect(lists, algorithm=algorithm)
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got, functools.reduce(np.intersect1d, lists))


def test_intersect_converts_other_integers_once(rng):
    lists = [sorted_ids(rng, 2000, 50_000), sorted_ids(rng, 3000, 50_000)]
    want = simkit.intersect(lists)
    np.testing.assert_array_equal(simkit.intersect([l.astype(np.int64) for l in lists]), want)
    np.testing.assert_array_equal(simkit.intersect([l.tolist() for l in lists]), want)
    np.testing.assert_array_equal(simkit.intersect([lists[0][::1], lists[1].astype(np.uint64)]), want)


@pytest.mark.parametrize("lists, message", [
    ([], "empty"),
    ([np.array([3, 2, 5], dtype=np.uint32)], "strictly increasing"),
    ([np.array([1, 1], dtype=np.uint32)], "strictly increasing"),
    ([np.array([-1, 2])], "0..4294967295"),
    ([np.array([1, 1 << 33])], "0..4294967295"),
    ([np.array([1.0, 2.0])], "integer ids"),
    ([np.array([[1, 2]], dtype=np.uint32)], "1-D"),
])
def test_intersect_refuses_bad_lists(lists, message):
    with pytest.raises(ValueError, match=message):
        simkit.intersect(lists)


def test_intersect_refuses_an_unknown_algorithm():
    with pytest.raises(simkit.UsageError) as error:
        simkit.intersect([np.arange(3, dtype=np.uint32)], algorithm="merge")
    assert str(error.value) == cli_error("postings", "query", "--index", "x", "--queries", "x", "--algorithm", "merge")


@pytest.fixture(scope="module")
def index():
    return simkit.PostingsIndex.build(BROWN.read_text(encoding="utf-8").split("\n")[:-1])


def answers_of(text):
    return [np.array(row[2:], dtype=np.uint32) for row in tsv(text)]


def test_index_and_queries_equal_the_command_line(index, tmp_path):
    skp = tmp_path / "brown.skp"
    run_cli("postings", "build", BROWN, "-o", skp)
    want = answers_of(run_cli("postings", "query", "--index", skp, "--queries", QUERIES, "--device", "cpu"))
    queries = QUERIES.read_text(encoding="utf-8").splitlines()
    for idx in (index, simkit.PostingsIndex.build_files(BROWN), simkit.PostingsIndex.load(skp)):
        assert idx.documents == 7620 and len(idx) == len(idx.vocabulary)
        for algorithm in ("auto", "svs", "bitmap"):
            got = idx.query(queries, algorithm=algorithm, device="cpu")
            assert len(got) == len(want) == 1000
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
    # What the command line built, Python saves byte for byte.
    index.save(tmp_path / "python.skp")
    assert (tmp_path / "python.skp").read_bytes() == skp.read_bytes()


def test_queries_of_term_ids_are_the_intersections_of_the_lists(index, rng):
    terms = [rng.choice(len(index), size=n, replace=False) for n in (1, 2, 3, 2, 4)]
    frequent = [index.term(w) for w in ("the", "of", "a", "in")]
    terms.append(np.array(frequent))
    got = index.query(terms, device="cpu")
    for t, answer in zip(terms, got):
        np.testing.assert_array_equal(answer, functools.reduce(np.intersect1d, [index.list(int(x)) for x in t]))
    assert len(got[-1]) > 10
    lists = index.list(frequent[0])
    assert lists.dtype == np.uint32 and not lists.flags.writeable and np.all(np.diff(lists.astype(np.int64)) > 0)


def test_words_are_looked_up_as_the_index_stores_them():
    idx = simkit.PostingsIndex.build(["The cat sat.", "A dog!", "the dog sat", ""])
    assert idx.vocabulary == ["a", "cat", "dog", "sat", "the"] and idx.documents == 4
    assert [a.tolist() for a in idx.query(["the sat", "dog", "DOG The", "unicorn"])] == [[0, 2], [1, 2], [2], []]
    kept = simkit.PostingsIndex.build(["The cat", "the dog"], keep_case=True)
    assert kept.vocabulary == ["The", "cat", "dog", "the"]
    assert [a.tolist() for a in kept.query(["The", "the"], keep_case=True)] == [[0], [1]]
    assert idx.term("cat") == 1 and idx.term("unicorn") is None


def test_bad_queries_and_files_raise_the_command_lines_errors(index, tmp_path):
    with pytest.raises(simkit.InputError, match=r"^queries:2: expected a query \(words\)"):
        index.query(["the", "  ", "a"])
    with pytest.raises(simkit.InputError, match=r"^queries:1:3: term id 999999 is out of range"):
        index.query([[1, 999999]])
    with pytest.raises(ValueError, match="all as words or all as term ids"):
        index.query(["the", [1]])
    with pytest.raises(ValueError, match="line break"):
        index.query(["the\nof"])
    with pytest.raises(ValueError, match="empty"):
        index.query([])
    with pytest.raises(ValueError, match="empty"):
        simkit.PostingsIndex.build([])
    missing = tmp_path / "missing.skp"
    with pytest.raises(FileNotFoundError) as error:
        simkit.PostingsIndex.load(missing)
    assert error.value.strerror == cli_error("postings", "query", "--index", missing, "--queries", QUERIES)
    bad = tmp_path / "bad.skp"
    bad.write_bytes(b"SKP1" + bytes(40))
    with pytest.raises(simkit.InputError) as error:
        simkit.PostingsIndex.load(bad)
    assert str(error.value).startswith(str(bad))
