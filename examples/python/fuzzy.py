#!/usr/bin/env python3
"""ssdeep-compatible fuzzy hashes and near-duplicate files among the bundled Boost headers."""
import pathlib
import random

import simkit

boost = pathlib.Path(__file__).resolve().parents[2] / "data" / "samples" / "boost"
words = "the quick brown fox jumps over a lazy dog while five wizards box jolly quails at dawn".split()
r = random.Random(1)
text = " ".join(r.choice(words) for _ in range(3000)).encode()
edited = text[:6000] + b" a sentence that was not there before " + text[6000:12000]  # and the end cut
a, b = simkit.fuzzy_hash(text), simkit.fuzzy_hash(edited)
print(f"{a}\n{b}\nscore {simkit.fuzzy_compare(a, b)}")

files = sorted(p for p in boost.rglob("*.hpp"))
print(f"{files[0].name}: {simkit.fuzzy_hash_file(files[0])}")
pairs = simkit.dedup(boost, threshold=90)
print(f"{len(pairs)} pairs of {len(files)} headers score 90 or more, e.g.")
for path_a, path_b, score in pairs[:3]:
    print(f"  {score}  {pathlib.Path(path_a).relative_to(boost)}  {pathlib.Path(path_b).relative_to(boost)}")
close = simkit.dedup(boost, mode="edit-rate", rate=0.02)
print(f"{len(close)} pairs differ in less than 2% of their characters (edit rate)")
