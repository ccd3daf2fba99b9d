#!/usr/bin/env python3
"""DISCO: distributionally similar words from the Brown sentences."""
import pathlib
import tempfile

import simkit

corpus = pathlib.Path(__file__).resolve().parents[2] / "data" / "samples" / "postings" / "brown-sample.txt"
d = simkit.Disco.build(corpus, window=3, min_count=2)
print(d)
for word in ("president", "monday", "money"):
    print(f"{word}: " + ", ".join(f"{w} {s:.3f}" for w, s in d.similar(word, k=5)))
print(f"compare(monday, friday) = {d.compare('monday', 'friday'):.3f}")

with tempfile.TemporaryDirectory() as folder:
    gold = pathlib.Path(folder) / "gold.txt"
    gold.write_text("monday\tfriday\t9\nmonday\tmoney\t1\ncity\ttown\t8\nsaid\tcity\t0.5\npresident\tgovernor\t7\n")
    rho, pairs = d.evaluate(gold)
    print(f"Spearman's rho {rho:.3f} over {pairs} gold pairs")
