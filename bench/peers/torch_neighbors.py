#!/usr/bin/env python3
"""What a user would write in PyTorch: torch.topk(Q @ E.T, k) over unit vectors of the
seed's size, one query and batches, at fp32 / tf32 / fp16 / bf16. Timed with CUDA
events after warm-up, median of fresh random queries. Runs on the GPU machine.
With --gpus N the model's rows are split over N GPUs, each shard's top k taken on
its GPU (a host thread a GPU) and the N lists merged on the first (the host clock
times the whole call then, after a synchronize of every GPU).

Usage: torch_neighbors.py [--rows N] [--dim D] [--batch B] [--gpus N] [--precisions a,b] [--json OUT]
"""
import argparse
import concurrent.futures
import json
import statistics
import time

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


def timed_wall(fn, reps, warmup, devices):
    """Host-clock median over every device (work on several GPUs)."""
    def sync():
        for d in devices:
            torch.cuda.synchronize(d)
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        sync()
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times)


def sharded_topk(q, shards, offsets, k, pool):
    """Each shard's top k on its own GPU (a host thread a GPU, as topk may wait for its
    device), the lists merged on the first GPU."""
    def one(e):
        with torch.cuda.device(e.device):
            return torch.topk(q.to(e.device, non_blocking=True) @ e.T, min(k, e.shape[0]))
    parts = list(pool.map(one, shards))
    first = q.device
    scores = torch.cat([p.values.to(first) for p in parts], dim=1)
    rows = torch.cat([(p.indices + off).to(first) for p, off in zip(parts, offsets)], dim=1)
    best = torch.topk(scores, k)
    return best.values, torch.gather(rows, 1, best.indices)


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
    p.add_argument("--gpus", type=int, default=0,
                   help="split the model's rows over this many GPUs (1: the same code on one GPU, host clock)")
    p.add_argument("--precisions", default="fp32,tf32,fp16,bf16")
    p.add_argument("--json")
    a = p.parse_args()
    if a.gpus >= 1:
        return main_sharded(a)
    gen = torch.Generator(device="cuda").manual_seed(42)
    base = unit(a.rows, a.dim, torch.float32, gen)
    results = []
    for name in a.precisions.split(","):
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


def main_sharded(a):
    devices = [torch.device(f"cuda:{i}") for i in range(a.gpus)]
    gen = torch.Generator(device="cuda:0").manual_seed(42)
    base = unit(a.rows, a.dim, torch.float32, gen)
    bounds = [a.rows * i // a.gpus for i in range(a.gpus + 1)]
    results = []
    for name in a.precisions.split(","):
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(name, torch.float32)
        shards = [base[bounds[i]:bounds[i + 1]].to(devices[i]).to(dtype) for i in range(a.gpus)]
        batches = [unit(a.batch, a.dim, dtype, gen) for _ in range(3)]
        state = {"i": 0}

        pool = concurrent.futures.ThreadPoolExecutor(a.gpus)

        def many():
            q = batches[state["i"] % len(batches)]
            state["i"] += 1
            return sharded_topk(q, shards, bounds[:-1], a.k, pool)

        batch_ms = timed_wall(many, a.batch_reps, 2, devices)
        pool.shutdown()
        results.append({"precision": name, "batch_ms": batch_ms, "queries_per_s": a.batch / (batch_ms / 1e3)})
        print(f"torch {name} on {a.gpus} GPUs: batch of {a.batch} {batch_ms:.2f} ms = "
              f"{a.batch / (batch_ms / 1e3):.0f} queries/s", flush=True)
        del shards
        for d in devices:
            with torch.cuda.device(d):
                torch.cuda.empty_cache()
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "gpus": a.gpus, "rows": a.rows,
           "dim": a.dim, "batch": a.batch, "k": a.k, "results": results}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
