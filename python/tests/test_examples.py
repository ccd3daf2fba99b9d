"""Each example of examples/python/ runs and prints what it should."""
import subprocess
import sys

import pytest

from conftest import SOURCE

EXPECTED = {
    "neighbors.py": ["4000 words x 100 dimensions", "king - man + woman: ", "queen 0.", "water(1.00)"],
    "topk.py": ["cosine: nearest rows [0, 1, 2, 3, 4]", "l2    : nearest rows [0, 1, 2, 3, 4]",
                "l2 lists equal NumPy's: True"],
    "fuzzy.py": ["score ", "headers score 90 or more", "edit rate"],
    "postings.py": ["7620 documents", "intersect agrees: True"],
    "disco.py": ["president: ", "Spearman's rho"],
    "glvq.py": ["20 prototypes, test accuracy 0.9", "5-fold cross-validation: 0."],
    "cca.py": ["t=256: ", "synthetic t=200: first correlation 0.", "synthetic t=1700: first correlation 0."],
}


def test_every_example_is_checked():
    assert sorted(p.name for p in (SOURCE / "examples" / "python").glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name):
    done = subprocess.run([sys.executable, SOURCE / "examples" / "python" / name], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    for text in EXPECTED[name]:
        assert text in done.stdout, f"{text!r} not in:\n{done.stdout}"
