"""simkit.Disco against the `simkit disco` program, and its two scoring paths against
each other."""
import numpy as np
import pytest

import simkit
from conftest import SAMPLES, cli_error, run_cli, tsv

CORPUS = SAMPLES / "postings" / "brown-sample.txt"
WORDS = ["president", "city", "money", "said", "john"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("disco")
    skd = folder / "brown.skd"
    run_cli("disco", "build", CORPUS, "-o", skd, "--window", 3, "--min-count", 2)
    model = simkit.Disco.build(CORPUS, window=3, min_count=2)
    return model, skd


def test_build_equals_the_command_lines_model(built, tmp_path):
    model, skd = built
    model.save(tmp_path / "python.skd")
    assert (tmp_path / "python.skd").read_bytes() == skd.read_bytes()
    loaded = simkit.Disco.load(skd)
    assert loaded.words == model.words and len(loaded) == len(model) > 1000 and loaded.window == 3
    assert "President" in model and "qqqzzz" not in model


def test_similar_compare_and_evaluate_equal_the_command_line(built, tmp_path):
    model, skd = built
    want = tsv(run_cli("disco", "similar", "--model", skd, *WORDS, "--k", 8))
    got = [[w, str(rank), n, f"{s:.6f}"] for w in WORDS for rank, (n, s) in enumerate(model.similar(w, k=8), 1)]
    assert got == want
    for a, b in [("city", "town"), ("money", "president"), ("said", "said")]:
        line = tsv(run_cli("disco", "compare", "--model", skd, a, b))[0]
        assert f"{model.compare(a, b):.6f}" == line[2]
    words = model.words
    gold = tmp_path / "gold.txt"
    gold.write_text("".join(f"{words[i]}\t{words[i + 7]}\t{(i * 37) % 10}\n" for i in range(0, 300, 3)) +
                    "qqqzzz\tcity\t5\n")
    rho, pairs = model.evaluate(gold)
    line = tsv(run_cli("disco", "evaluate", "--model", skd, gold))[0]
    assert line[2] == f"{rho:.4f}" and line[4] == str(pairs) == "100" and line[6] == "101"


def test_all_pairs_give_each_words_own_list():
    model = simkit.Disco.build(CORPUS, window=3, min_count=2, words=400)  # vectors for the 400 most frequent
    scores, indices = model.all_similar(k=5, device="cpu")
    assert scores.shape == indices.shape == (len(model), 5) == (400, 5)
    words = model.words
    for w in words[:400:9]:
        row = words.index(w)
        alone = model.similar(w, k=5)
        assert [words[i] for i in indices[row]] == [n for n, _ in alone]
        np.testing.assert_allclose(scores[row], [s for _, s in alone], atol=1e-6)
        assert model.compare(w, alone[0][0]) == pytest.approx(alone[0][1], abs=1e-12)
    sparse = model.all_similar(k=5, device="cpu", form="sparse")
    np.testing.assert_array_equal(sparse[1], indices)


def test_bad_inputs_raise_the_command_lines_errors(built, tmp_path):
    model, skd = built
    with pytest.raises(simkit.InputError) as error:
        model.similar("qqqzzz")
    assert str(error.value) == cli_error("disco", "similar", "--model", skd, "qqqzzz")
    with pytest.raises(simkit.InputError):
        model.compare("city", "qqqzzz")
    with pytest.raises(ValueError, match="at least 1"):
        model.similar("city", k=0)
    with pytest.raises(simkit.UsageError, match="expected dense or sparse"):
        model.all_similar(form="diagonal")
    missing = tmp_path / "missing.txt"
    with pytest.raises(FileNotFoundError) as error:
        simkit.Disco.build(missing)
    assert error.value.strerror == cli_error("disco", "build", missing, "-o", tmp_path / "x.skd")
    with pytest.raises(FileNotFoundError):
        simkit.Disco.load(missing)
    with pytest.raises(FileNotFoundError):
        model.evaluate(missing)
    empty = tmp_path / "empty.txt"
    empty.write_text("the of and\n")
    with pytest.raises(simkit.InputError) as error:
        simkit.Disco.build(empty)
    assert str(error.value) == cli_error("disco", "build", empty, "-o", tmp_path / "x.skd")
    with pytest.raises(ValueError, match="empty"):
        simkit.Disco.build([])
