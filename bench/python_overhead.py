#!/usr/bin/env python3
"""The Python call overhead of simkit (bench/results/python.md): WordVectors.neighbors for
one word and WordVectors.search for a batch of query vectors, timed through Python and,
in the same run on the same files, the same calls in C++ (simkit_bench_calls); beside
FAISS's IndexFlatIP.search (CPU) and PyTorch (matrix product + topk, on the device asked
for) over the same unit vectors. Answers are compared before anything is timed.

  PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py --cpp build/bench/simkit_bench_calls
  ... --device cuda --rows 2196016    (on a GPU machine)

Rounds alternate Python and C++ (and the peers) so that a busy machine slows both alike;
each figure is the median over all rounds' repetitions, and the ratio Python / C++ is also
taken round by round (the median of the rounds' ratios). Beside that, inside one process:
each Python call's time minus the time simkit spent searching in it
(WordVectors.last_search_ms), the overhead of the call itself, which a loaded machine
hardly moves. Prints a table; --json writes the figures.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import simkit


def unit_rows(rng, rows, dim):
    x = rng.standard_normal((rows, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def timed(fn, reps, inside=None):
    """Milliseconds of each call after a warm-up; with `inside`, also each call's time
    minus inside() (what simkit says it spent)."""
    fn()  # warm-up
    out, rest = [], []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1e3)
        if inside is not None:
            rest.append(out[-1] - inside())
    return out, rest


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cpp", required=True, help="the simkit_bench_calls program")
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--dim", type=int, default=300)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--device", default="cpu")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--single-reps", type=int, default=30)
    p.add_argument("--batch-reps", type=int, default=5)
    p.add_argument("--no-faiss", action="store_true")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--workdir", help="where the model and queries are written (default: a temporary folder)")
    p.add_argument("--json")
    a = p.parse_args()

    rng = np.random.default_rng(42)
    vectors = np.concatenate([unit_rows(rng, min(1 << 17, a.rows - s), a.dim) for s in range(0, a.rows, 1 << 17)])
    queries = unit_rows(rng, a.batch, a.dim)
    word = "w12345" if a.rows > 12345 else "w1"
    folder = pathlib.Path(a.workdir or tempfile.mkdtemp(prefix="simkit-overhead-"))
    folder.mkdir(parents=True, exist_ok=True)
    skv, qfile = folder / "model.skv", folder / "queries.f32"
    simkit.WordVectors.from_vectors([f"w{i}" for i in range(a.rows)], vectors).save(skv)
    queries.tofile(qfile)
    m = simkit.WordVectors.load(skv)  # memory-mapped, as the C++ program reads it
    device = simkit.resolve_device(a.device)
    print(f"simkit {simkit.__version__}: {a.rows} x {a.dim} unit vectors, batch {a.batch}, k {a.k}, on {device}, "
          f"{simkit.get_num_threads()} threads", flush=True)

    # Answers first: simkit's batch against NumPy (and FAISS / PyTorch below).
    scores, indices = m.search(queries, k=a.k, device=a.device)
    check = queries[:16] @ vectors.T  # float32 products: near-ties may swap, hence the 0.99
    want = np.argsort(-check, axis=1, kind="stable")[:, :a.k]
    agree = float((indices[:16] == want).mean())
    assert agree > 0.99, f"simkit and NumPy agree on only {agree:.3f} of the slots"

    peers = {}
    if not a.no_faiss and device == "cpu":
        try:
            import faiss
            index = faiss.IndexFlatIP(a.dim)
            index.add(vectors)
            _, fi = index.search(queries, a.k)
            assert (fi == indices).mean() > 0.99
            peers["faiss"] = (lambda: index.search(queries[:1], a.k), lambda: index.search(queries, a.k),
                              f"FAISS {faiss.__version__} IndexFlatIP ({faiss.omp_get_max_threads()} threads)")
        except ImportError:
            print("(no faiss: install python3-faiss, scripts/setup.sh --bench)")
    if not a.no_torch:
        try:
            import torch
            tdev = "cuda" if device.startswith("cuda") else "cpu"
            e = torch.from_numpy(vectors).to(tdev)

            def torch_search(q):  # host in, host out, as simkit's calls
                s, i = torch.topk(torch.from_numpy(q).to(tdev) @ e.T, a.k, dim=1)
                return s.cpu().numpy(), i.cpu().numpy()

            assert (torch_search(queries)[1] == indices).mean() > 0.99
            peers["torch"] = (lambda: torch_search(queries[:1]), lambda: torch_search(queries),
                              f"PyTorch {torch.__version__} matmul + topk ({tdev}, fp32)")
        except ImportError:
            pass

    env = dict(os.environ)
    cpp = [a.cpp, "--model", str(skv), "--queries", str(qfile), "--word", word, "-k", str(a.k), "--device", a.device,
           "--single-reps", str(a.single_reps), "--batch-reps", str(a.batch_reps)]
    times = {"python": ([], []), "cpp": ([], []), **{name: ([], []) for name in peers}}
    ratios, overhead = ([], []), ([], [])
    inside = lambda: m.last_search_ms  # noqa: E731
    for _ in range(a.rounds):
        single, rest_single = timed(lambda: m.neighbors(word, k=a.k, device=a.device), a.single_reps, inside)
        batch, rest_batch = timed(lambda: m.search(queries, k=a.k, device=a.device), a.batch_reps, inside)
        done = subprocess.run(cpp, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cpp)}: {done.stderr}")
        result = json.loads(done.stdout)
        for i, (mine, theirs) in enumerate(((single, result["single_ms"]), (batch, result["batch_ms"]))):
            times["python"][i].extend(mine)
            times["cpp"][i].append(theirs)
            ratios[i].append(statistics.median(mine) / theirs)
        overhead[0].extend(rest_single)
        overhead[1].extend(rest_batch)
        for name, (single_fn, batch_fn, _) in peers.items():
            times[name][0].extend(timed(single_fn, a.single_reps)[0])
            times[name][1].extend(timed(batch_fn, a.batch_reps)[0])

    med = {name: (statistics.median(s), statistics.median(b)) for name, (s, b) in times.items()}
    rows = [("simkit, Python (WordVectors)", *med["python"]), ("simkit, C++ (Searcher)", *med["cpp"])]
    rows += [(peers[name][2], *med[name]) for name in peers]
    print(f"{'':52} {'one word (ms)':>14} {'batch (ms)':>11} {'queries/s':>10}")
    for name, single, batch in rows:
        print(f"{name:52} {single:14.3f} {batch:11.2f} {a.batch / batch * 1e3:10.0f}")
    paired = [statistics.median(r) for r in ratios]
    calls = [statistics.median(o) for o in overhead]
    print(f"Python / C++ (medians): one word {med['python'][0] / med['cpp'][0]:.3f}, "
          f"batch {med['python'][1] / med['cpp'][1]:.3f}")
    print(f"Python / C++ (round by round, median of {a.rounds}): one word {paired[0]:.3f}, batch {paired[1]:.3f}; "
          f"rounds: {' '.join(f'{r:.3f}' for r in ratios[0])} | {' '.join(f'{r:.3f}' for r in ratios[1])}")
    print(f"the call around simkit's search (wall - last_search_ms): one word {calls[0]:.3f} ms, "
          f"batch {calls[1]:.3f} ms")
    if a.json:
        out = {"device": device, "rows": a.rows, "dim": a.dim, "batch": a.batch, "k": a.k,
               "threads": simkit.get_num_threads(), "version": simkit.__version__,
               "median_ms": {name: {"single": s, "batch": b} for name, (s, b) in med.items()},
               "ratio_by_round": {"single": ratios[0], "batch": ratios[1]},
               "call_overhead_ms": {"single": calls[0], "batch": calls[1]},
               "peers": {name: peers[name][2] for name in peers}}
        pathlib.Path(a.json).write_text(json.dumps(out, indent=2) + "\n")
    if not a.workdir:
        skv.unlink()
        qfile.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
