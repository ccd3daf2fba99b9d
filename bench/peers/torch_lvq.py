#!/usr/bin/env python3
"""What a user would write in PyTorch for the seed's GLVQ step without the update: per
mini-batch, all sample-prototype squared distances (|x|^2 + |m|^2 - 2 x.m), the genuine
(own class) and rival (other classes) minima, mu and the sigmoid loss. Synthetic data of
the seed's shape (2,144,749 x 160, 3755 classes) resident on the GPU; one epoch timed
with CUDA events after a warm-up epoch. fp32 (and tf32 with --tf32). Runs on the GPU machine.

Usage: torch_lvq.py [--rows N] [--dims D] [--classes C] [--prototypes 1,8] [--batch 2048] [--json OUT]
"""
import argparse
import json

import torch

from torch_neighbors import timed  # CUDA events around a call, median of reps


def epoch(x, y, m, proto_class, batch, xi=4.0):
    m2 = (m * m).sum(1)
    total = torch.zeros((), device="cuda")
    for i in range(0, x.shape[0], batch):
        xb, yb = x[i:i + batch], y[i:i + batch]
        d = (xb * xb).sum(1, keepdim=True) + m2[None, :] - 2 * xb @ m.T
        same = proto_class[None, :] == yb[:, None]
        dc = torch.where(same, d, torch.inf).min(1).values
        dr = torch.where(same, torch.inf, d).min(1).values
        mu = (dc - dr) / (dc + dr)
        total += torch.sigmoid(xi * mu).sum()
    return total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=2144749)
    p.add_argument("--dims", type=int, default=160)
    p.add_argument("--classes", type=int, default=3755)
    p.add_argument("--prototypes", default="1,8")
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--tf32", action="store_true")
    p.add_argument("--json")
    args = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(7)
    centres = torch.rand(args.classes, args.dims, device="cuda", generator=gen) * 2 - 1
    y = torch.arange(args.rows, device="cuda") % args.classes
    x = centres[y] + (torch.rand(args.rows, args.dims, device="cuda", generator=gen) * 1.6 - 0.8)
    results = []
    for tf32 in [False, True] if args.tf32 else [False]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for per_class in [int(v) for v in args.prototypes.split(",")]:
            m = centres.repeat_interleave(per_class, 0) + (torch.rand(args.classes * per_class, args.dims, device="cuda",
                                                                       generator=gen) * 0.2 - 0.1)
            proto_class = torch.arange(args.classes * per_class, device="cuda") // per_class
            ms = timed(lambda: epoch(x, y, m, proto_class, args.batch), reps=1, warmup=1)
            name = "tf32" if tf32 else "fp32"
            print(f"torch {name} P {per_class} mb {args.batch}: {ms / 1000:.3f} s per epoch (distances + genuine/rival, no update)")
            results.append({"precision": name, "per_class": per_class, "batch": args.batch, "seconds": ms / 1000})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
