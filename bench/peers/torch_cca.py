#!/usr/bin/env python3
"""What a user would write in PyTorch to track sliding-window CCA: at every arriving tuple,
recompute the window's means and covariances from the whole window (resident on the GPU,
a ring), then the Cholesky whitening and the eigenvalues of the whitened cross-covariance's
Gram matrix (the canonical correlations' squares). The seed's shape: p = 256, q = 512,
n = 2048, the seed's linear data (4 shared factors + N(10, 10) noise). Time per tuple with
CUDA events over --steps tuples after a warm-up, float64 and float32. Runs on the GPU machine.

Usage: torch_cca.py [--p 256] [--q 512] [--window 2048] [--steps 50] [--json OUT]
"""
import argparse
import json

import torch


def stream(count, p, q, dtype, gen):
    load = torch.randn(p + q, 4, device="cuda", dtype=dtype, generator=gen) * 2
    z = torch.randn(count, 4, device="cuda", dtype=dtype, generator=gen)
    noise = torch.randn(count, p + q, device="cuda", dtype=dtype, generator=gen) * (10 ** 0.5) + 10
    return z @ load.T + noise


def correlations(window, p, k=5):
    n = window.shape[0]
    c = window - window.mean(0, keepdim=True)
    s = c.T @ c / (n - 1)
    s11, s22, s12 = s[:p, :p], s[p:, p:], s[:p, p:]
    l1 = torch.linalg.cholesky(s11)
    l2 = torch.linalg.cholesky(s22)
    k1 = torch.linalg.solve_triangular(l1, s12, upper=False)
    kk = torch.linalg.solve_triangular(l2, k1.T, upper=False).T
    values = torch.linalg.eigvalsh(kk @ kk.T)
    return values[-k:].clamp(0, 1).sqrt().flip(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p", type=int, default=256)
    ap.add_argument("--q", type=int, default=512)
    ap.add_argument("--window", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--json")
    args = ap.parse_args()
    results = []
    for dtype in (torch.float64, torch.float32):
        gen = torch.Generator(device="cuda").manual_seed(5)
        data = stream(args.window + args.steps + 10, args.p, args.q, dtype, gen)
        ring = data[: args.window].clone()
        out = []
        for t in range(5):  # warm-up
            ring[t % args.window] = data[args.window + t]
            out.append(correlations(ring, args.p))
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for t in range(args.steps):
            ring[t % args.window] = data[args.window + 5 + t]
            out.append(correlations(ring, args.p))
            out[-1].cpu()  # the answer reaches the host, as simkit's does
        stop.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(stop) / args.steps
        name = "float64" if dtype == torch.float64 else "float32"
        print(f"torch {name} recompute per tuple (p {args.p}, q {args.q}, n {args.window}): {ms:.3f} ms "
              f"({1000 / ms:.0f} tuples/s); top-5 {out[-1].tolist()}")
        results.append({"precision": name, "ms_per_tuple": ms, "tuples_per_s": 1000 / ms})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
