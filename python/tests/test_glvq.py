"""simkit.GLVQ: the `simkit lvq` program's answers, scikit-learn's estimator protocol
(clone, cross_val_score) and nearest centroids as an independent reference."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import NearestCentroid
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import simkit
from conftest import SAMPLES, run_cli, tsv

TRAIN = SAMPLES / "digits" / "train.csv"
TEST = SAMPLES / "digits" / "test.csv"


def digits(path):
    data = np.loadtxt(path, delimiter=",", dtype=np.float32)
    return data[:, 1:], data[:, 0].astype(np.int64)


@pytest.fixture(scope="module")
def data():
    return digits(TRAIN) + digits(TEST)


def test_fit_and_predict_equal_the_command_line(data, tmp_path):
    x, y, xt, yt = data
    skq = tmp_path / "digits.skq"
    run_cli("lvq", "train", "--train", TRAIN, "-p", 2, "-e", 10, "-o", skq, "--device", "cpu")
    lines = tsv(run_cli("lvq", "predict", "--model", skq, "--data", TEST, "--device", "cpu"))
    glvq = simkit.GLVQ(prototypes_per_class=2, epochs=10, device="cpu").fit(x, y)
    cli = simkit.GLVQ.load(skq, device="cpu")
    np.testing.assert_array_equal(glvq.prototypes_, cli.prototypes_)
    predicted = glvq.predict(xt)
    assert [[str(i + 1), str(c)] for i, c in enumerate(predicted)] == lines[:-1]
    assert lines[-1] == [f"accuracy {glvq.score(xt, yt):.4f}"]
    assert glvq.score(xt, yt) > 0.9
    assert list(cli.classes_) == [str(c) for c in range(10)]
    assert glvq.prototypes_.shape == (20, 64) and glvq.prototypes_.dtype == np.float32
    np.testing.assert_array_equal(glvq.prototype_labels_, np.repeat(np.arange(10), 2))
    assert len(glvq.loss_curve_) == 10 and glvq.loss_curve_[-1] < glvq.loss_curve_[0]
    # Python's model file is the command line's.
    glvq.save(tmp_path / "python.skq")
    assert (tmp_path / "python.skq").read_bytes() == skq.read_bytes()
    top = glvq.predict_top(xt[:5], top=3)
    assert top.shape == (5, 3) and np.all(top[:, 0] == predicted[:5])
    assert tsv(run_cli("lvq", "predict", "--model", skq, "--data", TEST, "--top", 3, "--device", "cpu"))[:5] == \
        [[str(i + 1), *map(str, row)] for i, row in enumerate(top)]


def test_without_epochs_the_prototypes_are_the_class_means(data):
    x, y, xt, _ = data
    glvq = simkit.GLVQ(epochs=0, device="cpu").fit(x, y)
    means = np.stack([x[y == c].astype(np.float64).mean(axis=0) for c in range(10)])
    np.testing.assert_allclose(glvq.prototypes_, means, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(glvq.predict(xt), NearestCentroid().fit(x, y).predict(xt))


def test_scikit_learn_protocol(data):
    x, y, _, _ = data
    glvq = simkit.GLVQ(prototypes_per_class=3, epochs=5, batch_size=16, device="cpu")
    params = glvq.get_params()
    assert params["prototypes_per_class"] == 3 and params["batch_size"] == 16
    copy = clone(glvq)
    assert copy is not glvq and copy.get_params() == params
    assert glvq.set_params(epochs=7) is glvq and glvq.epochs == 7
    with pytest.raises(ValueError, match="invalid parameter"):
        glvq.set_params(prototype_count=2)
    scores = cross_val_score(simkit.GLVQ(epochs=5, device="cpu"), x, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.85)
    pipeline = make_pipeline(StandardScaler(), simkit.GLVQ(epochs=5, device="cpu")).fit(x, y)
    assert pipeline.score(x, y) > 0.9
    assert "epochs=7" in repr(glvq)


def test_labels_of_any_kind(rng):
    x = np.concatenate([rng.normal(0, 1, (60, 4)), rng.normal(5, 1, (60, 4))]).astype(np.float32)
    names = np.array(["small"] * 60 + ["large"] * 60)
    glvq = simkit.GLVQ(epochs=5, device="cpu", standardize=True).fit(x.astype(np.float64), names)
    assert list(glvq.classes_) == ["large", "small"]
    assert glvq.mean_.shape == (4,) and glvq.scale_.shape == (4,)
    assert glvq.score(x, names) == 1.0
    assert set(glvq.predict(x[:3])) == {"small"}


def test_bad_inputs_raise_value_errors(data):
    x, y, _, _ = data
    with pytest.raises(ValueError, match="at least 2 classes"):
        simkit.GLVQ(device="cpu").fit(x, np.zeros(len(x)))
    with pytest.raises(ValueError, match="2-D"):
        simkit.GLVQ(device="cpu").fit(x[0], y[:1])
    with pytest.raises(ValueError, match="labels"):
        simkit.GLVQ(device="cpu").fit(x, y[:-1])
    with pytest.raises(ValueError, match="real numbers"):
        simkit.GLVQ(device="cpu").fit(x.astype(complex), y)
    with pytest.raises(ValueError, match="fewer than the 50 prototypes"):
        simkit.GLVQ(prototypes_per_class=50, epochs=1, device="cpu").fit(x[:100], y[:100])
    with pytest.raises(ValueError, match="schedule"):
        simkit.GLVQ(schedule="cosine", device="cpu").fit(x, y)
    with pytest.raises(AttributeError, match="not fitted"):
        simkit.GLVQ().predict(x)
    fitted = simkit.GLVQ(epochs=1, device="cpu").fit(x, y)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(x[:, :10])
    with pytest.raises(FileNotFoundError):
        simkit.GLVQ.load("/nonexistent/model.skq")
