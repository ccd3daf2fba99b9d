#!/usr/bin/env python3
"""What a user would write in PyTorch for DISCO's all pairs (dense form): with A the N x F
matrix of MI values and M its 0/1 pattern, S = (A @ M.T + M @ A.T) / (s_i + s_j), the
diagonal masked, torch.topk per row; rows in blocks so S fits memory. fp32 and tf32,
timed with CUDA events after a warm-up. Runs on the GPU machine.

Usage: torch_disco.py [--sizes 5000,...] [--features F] [--per-word P] [--json OUT]
"""
import argparse
import json

import torch

from torch_neighbors import timed  # CUDA events around a call, median of reps


def synthetic(n, f, per_word, gen):
    # Zipf-like columns, values uniform in (0, 5], as simkit_bench_disco draws them.
    u = torch.rand(n, per_word, device="cuda", generator=gen, dtype=torch.float64)
    cols = (torch.pow(torch.tensor(float(f), dtype=torch.float64, device="cuda"), u).floor() - 1).long()
    a = torch.zeros(n, f, device="cuda")
    vals = torch.rand(n, per_word, device="cuda", generator=gen) * 5 + 1e-3
    a.scatter_(1, cols, vals)
    return a


def all_pairs(a, k, block):
    m = (a > 0).float()
    s = a.sum(1)
    out = []
    for i in range(0, a.shape[0], block):
        scores = (a[i:i + block] @ m.T + m[i:i + block] @ a.T) / (s[i:i + block, None] + s[None, :])
        idx = torch.arange(i, min(i + block, a.shape[0]), device="cuda")
        scores[idx - i, idx] = -1
        out.append(torch.topk(scores, k, dim=1))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="5000,10000,20000,50000,100000")
    p.add_argument("--features", type=int, default=10000)
    p.add_argument("--per-word", type=int, default=200)
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--block", type=int, default=8192)
    p.add_argument("--json")
    args = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(7)
    results = []
    for n in [int(x) for x in args.sizes.split(",")]:
        a = synthetic(n, args.features, args.per_word, gen)
        row = {"words": n}
        for name in ("fp32", "tf32"):
            torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
            all_pairs(a[: min(n, 2048)], args.k, args.block)  # warm-up on a slice: the whole is long
            row[name + "_ms"] = timed(lambda: all_pairs(a, args.k, args.block), reps=1, warmup=0)
        print(f"torch: N {n}: fp32 {row['fp32_ms']:.1f} ms, tf32 {row['tf32_ms']:.1f} ms", flush=True)
        results.append(row)
        del a
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "sizes": results}, f, indent=2)


if __name__ == "__main__":
    main()
