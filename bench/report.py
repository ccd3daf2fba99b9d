#!/usr/bin/env python3
"""Turns the neighbors benchmark JSON into the tables of bench/results/neighbors.md.

  report.py --gpu-dir DIR [--sweep-dir DIR] [--cpu-dir bench/results/raw] [--goals]

DIR holds neighbors_gpu.json (simkit_bench_neighbors --device cuda) and
neighbors_torch.json (bench/peers/torch_neighbors.py) from one run on the GPU machine;
--sweep-dir holds the sweep_<MB>.log files of scripts/gpu-run.sh's sweep step; the CPU
directory holds neighbors_cpu_<kernels>.json and neighbors_faiss_<kernels>.json from
bench/run-cpu.sh. Prints Markdown tables to stdout; the prose around them is written by
hand in neighbors.md.
"""
import argparse
import glob
import json
import os
import re

ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
CEILING = {"fp32": "fp32_tflop_s", "tf32": "tf32_tflop_s", "fp16": "fp16_tflop_s", "bf16": "bf16_tflop_s"}
GOAL_SINGLE_MS = {"fp32": 1.0}
GOAL_BATCH_QPS = {"tf32": 150_000, "fp16": 250_000, "bf16": 250_000}


def load(path):
    with open(path) as f:
        return json.load(f)


def table(title, header, rows):
    """A Markdown table: header is a list of (name, align) with align 'l' or 'r'."""
    out = [title + "\n"] if title else []
    out.append("| " + " | ".join(name for name, _ in header) + " |")
    out.append("|" + "|".join("---:" if align == "r" else "---" for _, align in header) + "|")
    out += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    out.append("")
    return out


def gpu_tables(gpu, torch):
    rows, dim = gpu["rows"], gpu["dim"]
    ceil = gpu.get("ceilings", {})
    peer = {r["precision"]: r for r in torch["results"]}
    single = []
    for r in gpu["results"]:
        p = r["precision"]
        ms = r["single"]["median_ms"]
        floor = rows * dim * ELEMENT_BYTES[p] / (ceil["copy_tb_s"] * 1e12) * 1e3 if ceil else float("nan")
        tp = peer[p]["single_ms"] if p in peer else float("nan")
        goal = f"<= {GOAL_SINGLE_MS[p]} ms: {'met' if ms <= GOAL_SINGLE_MS[p] else 'NOT met'}" if p in GOAL_SINGLE_MS else ""
        single.append((p, f"{ms:.3f}", f"{tp:.3f}", f"{tp / ms:.2f}x", f"{floor:.3f}", f"{ms / floor:.2f}", goal))
    out = table(f"### One query, {rows:,} x {dim}, k = {gpu['k']} ({gpu['device']})",
                [("precision", "l"), ("simkit ms", "r"), ("PyTorch ms", "r"), ("simkit vs PyTorch", "r"),
                 ("bandwidth floor ms", "r"), ("simkit / floor", "r"), ("goal", "l")], single)
    batch = []
    for r in gpu["results"]:
        p = r["precision"]
        qps = r["batch"]["queries_per_s"]
        tq = peer[p]["queries_per_s"] if p in peer else float("nan")
        # The GEMM alone at cuBLAS's measured rate: 2 * rows * dim flops a query.
        bound = ceil[CEILING[p]] * 1e12 / (2 * rows * dim) if ceil else float("nan")
        goal = f">= {GOAL_BATCH_QPS[p]:,}: {'met' if qps >= GOAL_BATCH_QPS[p] else 'NOT met'}" if p in GOAL_BATCH_QPS else ""
        tiles = r["batch_tiles"]["queries_per_s"] if "batch_tiles" in r else None
        batch.append((p, f"{qps:,.0f}", f"{tiles:,.0f}" if tiles else "(same path)",
                      f"{qps / tiles:.2f}x" if tiles else "", f"{tq:,.0f}", f"{qps / tq:.2f}x", f"{bound:,.0f}", goal))
    out += table(f"### Batches of {gpu['results'][0]['batch']['size']} queries",
                 [("precision", "l"), ("simkit queries/s", "r"), ("tiles only queries/s", "r"), ("fused vs tiles", "r"),
                  ("PyTorch queries/s", "r"), ("simkit vs PyTorch", "r"), ("GEMM-only bound queries/s", "r"),
                  ("goal", "l")], batch)
    if ceil:
        out.append(f"Ceilings measured in the same run: copy {ceil['copy_tb_s']:.2f} TB/s; cuBLAS GEMM "
                   f"fp32 {ceil['fp32_tflop_s']:.0f}, tf32 {ceil['tf32_tflop_s']:.0f}, fp16 {ceil['fp16_tflop_s']:.0f}, "
                   f"bf16 {ceil['bf16_tflop_s']:.0f} TFLOP/s.")
    checks = [f"{r['precision']} {r['check']['agree']}/{r['check']['queries']}" for r in gpu["results"] if "check" in r]
    if checks:
        out.append(f"Answers checked against the CPU path before timing (agreeing batch answers): {', '.join(checks)}.")
    out.append("")
    return out


def sweep_table(folder):
    pattern = re.compile(r"bench: (\w+): one query ([\d.]+) ms .*batch of (\d+) ([\d.]+) ms = (\d+) queries/s")
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "sweep_*.log")), key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0])):
        mb = int(re.findall(r"\d+", os.path.basename(path))[0])
        text = open(path).read()
        engine = re.findall(r"engine: (\d+) blocks of (\d+) x (\d+)", text)
        for p, _, _, _, qps in pattern.findall(text):
            blocks = f"{engine[-1][0]} of {engine[-1][1]} x {engine[-1][2]}" if engine else ""
            rows.append((mb, p, int(qps), blocks))
    if not rows:
        return []
    return table("### Score-tile size (batch of 1024)",
                 [("tile MiB", "r"), ("precision", "l"), ("queries/s", "r"), ("blocks", "l")],
                 [(mb, p, f"{qps:,}", blocks) for mb, p, qps, blocks in rows])


def cpu_table(folder):
    title, rows = None, []
    for path in sorted(glob.glob(os.path.join(folder, "neighbors_cpu_*.json"))):
        kernels = os.path.basename(path)[len("neighbors_cpu_"):-len(".json")]
        faiss_path = os.path.join(folder, f"neighbors_faiss_{kernels}.json")
        if not os.path.exists(faiss_path):
            continue
        ours, peer = load(path), load(faiss_path)
        r = ours["results"][0]
        title = f"### CPU, {ours['rows']:,} x {ours['dim']}, {ours['threads']} threads, FAISS {peer['faiss']} IndexFlatIP"
        rows.append((kernels, f"{r['single']['median_ms']:.1f}", f"{peer['single_ms']:.1f}",
                     f"{r['batch']['queries_per_s']:.0f}", f"{peer['queries_per_s']:.0f}",
                     f"{r['batch']['queries_per_s'] / peer['queries_per_s']:.2f}x"))
    if not rows:
        return []
    return table(title, [("OpenBLAS kernels", "l"), ("simkit one query ms", "r"), ("FAISS one query ms", "r"),
                         ("simkit batch queries/s", "r"), ("FAISS batch queries/s", "r"), ("batch ratio", "r")], rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu-dir")
    ap.add_argument("--sweep-dir")
    ap.add_argument("--cpu-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "raw"))
    a = ap.parse_args()
    lines = []
    if a.gpu_dir:
        lines += gpu_tables(load(os.path.join(a.gpu_dir, "neighbors_gpu.json")),
                            load(os.path.join(a.gpu_dir, "neighbors_torch.json")))
    if a.sweep_dir:
        lines += sweep_table(a.sweep_dir)
    lines += cpu_table(a.cpu_dir)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
