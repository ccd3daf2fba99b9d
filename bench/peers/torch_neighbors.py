#!/usr/bin/env python3
"""What a user would write in PyTorch: torch.topk(Q @ E.T, k) over unit vectors of the
seed's size, one query and batches, at fp32 / tf32 / fp16 / bf16. Timed with CUDA
events after warm-up, median of fresh random queries. Runs on the GPU machine.

Usage: torch_neighbors.py [--rows N] [--dim D] [--batch B] [--json OUT]
"""
import argparse
import json
import statistics

import torch


def timed(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def unit(rows, dim, dtype, gen):
    x = torch.randn(rows, dim, device="cuda", generator=gen)
    return torch.nn.functional.normalize(x, dim=1).to(dtype)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=2_196_016)
    p.add_argument("--dim", type=int, default=300)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--single-reps", type=int, default=50)
    p.add_argument("--batch-reps", type=int, default=10)
    p.add_argument("--json")
    a = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(42)
    base = unit(a.rows, a.dim, torch.float32, gen)
    results = []
    for name in ("fp32", "tf32", "fp16", "bf16"):
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(name, torch.float32)
        emb = base.to(dtype)
        singles = [unit(1, a.dim, dtype, gen) for _ in range(8)]
        batches = [unit(a.batch, a.dim, dtype, gen) for _ in range(3)]
        state = {"i": 0}

        def one():
            q = singles[state["i"] % len(singles)]
            state["i"] += 1
            return torch.topk(q @ emb.T, a.k)

        def many():
            q = batches[state["i"] % len(batches)]
            state["i"] += 1
            return torch.topk(q @ emb.T, a.k)

        single_ms = timed(one, a.single_reps, 5)
        batch_ms = timed(many, a.batch_reps, 2)
        results.append({"precision": name, "single_ms": single_ms, "batch_ms": batch_ms,
                        "queries_per_s": a.batch / (batch_ms / 1e3)})
        print(f"torch {name}: one query {single_ms:.3f} ms, batch of {a.batch} {batch_ms:.2f} ms = "
              f"{a.batch / (batch_ms / 1e3):.0f} queries/s", flush=True)
        del emb
        torch.cuda.empty_cache()
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "rows": a.rows, "dim": a.dim,
           "batch": a.batch, "k": a.k, "results": results}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
