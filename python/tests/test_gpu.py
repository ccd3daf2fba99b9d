"""The GPU paths give the CPU's answers (floats within fp32 rounding, ties by lower index);
skipped where no GPU is (or the build has no CUDA)."""
import numpy as np
import pytest

import simkit
from conftest import SAMPLES, check_topk, requires_gpu

pytestmark = requires_gpu


def test_auto_means_the_gpu():
    assert simkit.resolve_device("auto") == "cuda:0" == simkit.resolve_device("cuda")


def test_neighbors_and_search(rng):
    m = simkit.WordVectors.load(SAMPLES / "vectors.vec")
    queries = ["king", "king - man + woman", "water"]
    cpu = m.neighbors(queries, k=10, device="cpu")
    gpu = m.neighbors(queries, k=10, device="cuda")
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose([s for _, s in g], [s for _, s in c], atol=1e-5)
    q = rng.standard_normal((300, m.dim)).astype(np.float32)
    s_cpu, i_cpu = m.search(q, k=10, device="cpu")
    for precision, tol in (("fp32", 1e-5), ("fp16", 2e-2)):
        s_gpu, i_gpu = m.search(q, k=10, device="cuda", precision=precision)
        np.testing.assert_allclose(s_gpu, s_cpu, atol=tol)
        if precision == "fp32":
            assert (i_gpu == i_cpu).mean() > 0.99


def test_every_gpu_split_gives_one_gpus_answers(rng):
    m = simkit.WordVectors.load(SAMPLES / "vectors.vec")
    q = rng.standard_normal((2500, m.dim)).astype(np.float32)  # over 1,024 a GPU: auto may share by queries
    s_one, i_one = m.search(q, k=10, device="cuda:0")
    for split in ("auto", "rows", "queries"):
        s_all, i_all = m.search(q, k=10, device="cuda:all", gpu_split=split)
        np.testing.assert_array_equal(i_all, i_one)
        np.testing.assert_array_equal(s_all, s_one)


@pytest.mark.parametrize("metric", ["dot", "cosine", "l2"])
def test_topk(rng, metric):
    a = rng.standard_normal((200, 48)).astype(np.float32)
    b = rng.standard_normal((5000, 48)).astype(np.float32)
    s_cpu, i_cpu = simkit.topk(a, b, k=16, metric=metric, device="cpu")
    s_gpu, i_gpu = simkit.topk(a, b, k=16, metric=metric, device="cuda")
    np.testing.assert_allclose(s_gpu, s_cpu, rtol=1e-5, atol=1e-4)
    ints = rng.integers(-2, 3, size=(50, 6)).astype(np.float32)
    pool = rng.integers(-2, 3, size=(3000, 6)).astype(np.float32)
    for device in ("cpu", "cuda"):  # exact products: the same lists, ties and all
        if metric != "cosine":
            np.testing.assert_array_equal(simkit.topk(ints, pool, k=20, metric=metric, device=device)[1],
                                          simkit.topk(ints, pool, k=20, metric=metric, device="cpu")[1])
    full = a.astype(np.float64) @ b.T.astype(np.float64) if metric == "dot" else None
    if full is not None:
        check_topk(s_gpu, i_gpu, full, 16, tol=1e-5)


def test_dedup_postings_glvq_cca_and_disco():
    boost = SAMPLES / "boost"
    assert simkit.dedup(boost, device="cuda") == simkit.dedup(boost, device="cpu")
    assert simkit.dedup(boost, mode="edit-rate", rate=0.05, device="cuda") == \
        simkit.dedup(boost, mode="edit-rate", rate=0.05, device="cpu")
    brown = SAMPLES / "postings" / "brown-sample.txt"
    idx = simkit.PostingsIndex.build_files(brown)
    queries = (SAMPLES / "postings" / "queries.txt").read_text().splitlines()
    for g, c in zip(idx.query(queries, device="cuda"), idx.query(queries, device="cpu")):
        np.testing.assert_array_equal(g, c)
    data = np.loadtxt(SAMPLES / "digits" / "train.csv", delimiter=",", dtype=np.float32)
    x, y = data[:, 1:], data[:, 0].astype(int)
    cpu = simkit.GLVQ(epochs=5, device="cpu").fit(x, y)
    gpu = simkit.GLVQ(epochs=5, device="cuda").fit(x, y)
    np.testing.assert_allclose(gpu.prototypes_, cpu.prototypes_, rtol=1e-4, atol=1e-3)
    assert (gpu.predict(x) == cpu.predict(x)).mean() > 0.99
    rows = data.astype(np.float64)
    c = simkit.SlidingCCA(8, 8, 128, k=3, ridge=1e-3, every=50, device="cpu").update(rows[:, 1:9], rows[:, 9:17])
    g = simkit.SlidingCCA(8, 8, 128, k=3, ridge=1e-3, every=50, device="cuda").update(rows[:, 1:9], rows[:, 9:17])
    np.testing.assert_allclose(g, c, atol=1e-8)
    d = simkit.Disco.build(brown, window=3, min_count=2, words=400)
    sc, ic = d.all_similar(k=5, device="cpu")
    sg, ig = d.all_similar(k=5, device="cuda")
    np.testing.assert_allclose(sg, sc, atol=1e-5)
    assert (ig == ic).mean() > 0.99
