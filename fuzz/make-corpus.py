#!/usr/bin/env python3
"""Writes the fuzz seed corpora (fuzz/corpus/<target>/): small valid files, edge cases,
and the malformed files of tests/bad-inputs/ that belong to each parser.
Usage: make-corpus.py SIMKIT_BINARY   (the program writes the .skv seeds)
"""
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "bad-inputs"))
from make import exp_index, written_by  # noqa: E402  (the bad-input corpus's helpers)


def put(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def copy_bad(target, fmt):
    folder = os.path.join(ROOT, "tests", "bad-inputs", fmt)
    for name in sorted(os.listdir(folder)):
        if name.startswith("_") or name.endswith((".expect", ".args")):
            continue
        with open(os.path.join(folder, name), "rb") as f:
            put(target, "bad_" + name, f.read())


def sample_lines(n):
    with open(os.path.join(ROOT, "data", "samples", "vectors.vec")) as f:
        f.readline()
        lines = [f.readline() for _ in range(n)]
    return [" ".join(l.split()[:9]) + "\n" for l in lines]  # 8 dimensions


def w2v_binary(rows):
    out = f"{len(rows)} {len(rows[0][1])}\n".encode()
    for word, values in rows:
        out += word.encode() + b" " + struct.pack(f"<{len(values)}f", *values) + b"\n"
    return out


def npy(values, rows, cols, words):
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}".ljust(117) + "\n"
    body = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
    return body + struct.pack(f"<{len(values)}f", *values) + b"\n--words--\n" + words.encode()


def main(binary):
    shutil.rmtree(os.path.join(HERE, "corpus"), ignore_errors=True)
    lines = sample_lines(20)
    put("glove", "sample.txt", "".join(lines))
    put("glove", "spaces_crlf.txt", "x 1 2\r\nnew york 3 4\r\n. . . 5 6 \n")
    put("glove", "one.txt", "a 0.5\n")
    put("glove", "exponents.txt", "a 1e-3 -2E+2 +4 1e-45\nb 0 -0 3.4028235e38 .5\n")
    copy_bad("glove", "glove")
    put("word2vec_text", "sample.vec", f"20 8\n{''.join(lines)}")
    put("word2vec_text", "trailing_space.vec", "2 2\na 1 2 \nb 3 4 \n")
    copy_bad("word2vec_text", "word2vec")
    rows = [("alpha", [1.0, 2.0, 3.0]), ("beta", [-1.0, 0.5, 0.0]), ("caf\u00e9", [0.0, 0.0, 1.0])]
    put("word2vec_binary", "three.bin", w2v_binary(rows))
    put("word2vec_binary", "no_newlines.bin", w2v_binary(rows).replace(b"\n", b"", 3).replace(b" 3", b" 3\n", 1))
    copy_bad("word2vec_binary", "word2vec-binary")
    put("npy", "two_by_three.npy", npy([1, 2, 3, 4, 5, 6], 2, 3, "a\nb\n"))
    put("npy", "one_by_one.npy", npy([0.25], 1, 1, "x"))
    for name in sorted(os.listdir(os.path.join(ROOT, "tests", "bad-inputs", "npy"))):
        if name.endswith(".npy"):
            with open(os.path.join(ROOT, "tests", "bad-inputs", "npy", name), "rb") as f:
                put("npy", "bad_" + name, f.read() + b"\n--words--\nalpha\nbeta\n")
    for i, text in enumerate(["3 4\nalpha 1 2 3 4\nbeta -1 0.5 0 2\ngamma 0 0 1 0\n", "".join(lines)]):
        put("skv", f"valid{i}.skv", written_by(binary, ["neighbors", "convert", "{input}", "-o", "{output}"], text,
                                               f"m{i}.vec" if i == 0 else f"m{i}.txt", f"m{i}.skv"))
    copy_bad("skv", "skv")
    for target in ("glove", "word2vec_text", "word2vec_binary", "npy", "skv"):
        folder = os.path.join(HERE, "corpus", target)
        for name in sorted(os.listdir(folder))[:4]:
            with open(os.path.join(folder, name), "rb") as f:
                put("auto", f"{target}_{name}", f.read())
    copy_bad("auto", "any")
    for i, q in enumerate(["king - man + woman", "e-mail c++ -man", "king", "- king", "+x - -", "  queen\t+ zero ",
                           "man - man", "-", "king + + man", "\u65e5\u672c"]):
        put("query", f"q{i}.txt", q)
    # CTPH: signatures as ssdeep writes them (one pair a file), and bytes to hash.
    for i, pair in enumerate([
            "3:abcdefgh:abcd\n3:abcdefgh:abcd",
            "96:KQhaGCVZGhr83h3bc0ok3892m12wzgnMpGyPqHTStMm:KQhaGCVZGhr83h3bc0ok3892m12wzgnMs\n"
            "96:KQhaGCVZGhr83h3bc0ok3892m12wzgnMpGyPqHTStMx:KQhaGCVZGhr83h3bc0ok3892m12wzgnMs",
            "48:aaaaaaaabcdefghij:bbbbbbbcdefgh,\"file\"\n96:bcdefghijkl:cdefghijk",
            "-3:abc:def\n 3:abc:def", ":\n:", "12288:" + "A" * 70 + ":B\n6144:C:" + "A" * 64]):
        put("ctph", f"pair{i}.txt", pair)
    put("ctph", "text.txt", "".join(lines))
    # ssdeep hash lists: ours of a few bundled files, ssdeep's quirks, and the bad lists.
    with tempfile.TemporaryDirectory() as tmp:
        listed = os.path.join(tmp, "list.txt")
        mpl = os.path.join(ROOT, "data", "samples", "boost", "mpl")
        files = sorted(os.path.join(mpl, f) for f in os.listdir(mpl) if f.endswith(".hpp"))[:12]
        subprocess.run([binary, "hash", "-o", listed] + files, check=True)
        with open(listed) as f:
            put("hash_list", "boost.txt", f.read().replace(ROOT + "/", ""))
    head = "ssdeep,1.1--blocksize:hash:hash,filename\n"
    put("hash_list", "quirks.txt", head.replace("\n", "\r\n") + '3:abc:def,"a \\"quoted\\" name"\r\n\r\n'
        + "6:AAAAAAAAAbcdefgh:+/+/\n" + '12::,"empty parts"\n')
    put("hash_list", "header_only.txt", head)
    copy_bad("hash_list", "ssdeep")
    put("ctph", "zeros.bin", bytes(5000))
    # Posting lists: small ExpIndex files, a built .skp, query files of ids and of words
    # (the query target's first byte picks: even = term ids, odd = words).
    put("exp_index", "small.bin", exp_index([[1, 5, 9], [], [2, 5, 7, 9, 11], [5], list(range(0, 200, 3))]))
    put("exp_index", "dense.bin", exp_index([list(range(40)), list(range(0, 40, 2)), list(range(1, 40, 3))]))
    put("exp_index", "far.bin", exp_index([[0, 4294967295], [4294967295], [0]]))
    put("exp_index", "empty.bin", b"")
    copy_bad("exp_index", "exp-index")
    put("skp", "small.skp", written_by(binary, ["postings", "build", "{input}", "-o", "{output}", "-q"],
                                       "alpha beta\nbeta gamma café\nalpha gamma delta 日本\n\nbeta\n"))
    # An index with a bitmap: "the" in all 1,100 documents (dense lists are 1,024 ids or more).
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    rng_dense = random.Random(7)
    put("skp", "dense.skp", written_by(binary, ["postings", "build", "{input}", "-o", "{output}", "-q"],
                                       "\n".join("the " + " ".join(rng_dense.sample(words, 2)) for _ in range(1100))
                                       + "\n"))
    copy_bad("skp", "skp")
    # DISCO: a model built from a few sentences, gold standards (ours and the bad ones).
    put("skd", "small.skd", written_by(binary, ["disco", "build", "{input}", "-o", "{output}", "-q", "--window", "3"],
                                       "the red apple is sweet\nthe red cherry is sweet\na green apple is sour\nGreen tea\n"))
    put("skd", "ppmi.skd", written_by(binary, ["disco", "build", "{input}", "-o", "{output}", "-q", "--measure", "ppmi",
                                               "--distance-weights", "--features", "3"],
                                      "the red apple is sweet\nthe red cherry is sweet\na green apple is sour\nGreen tea\n"))
    copy_bad("skd", "skd")
    put("gold", "ws.txt", "love\tsex\t6.77\r\ntiger\tcat\t7.35\ntiger\ttiger\t10.00\n")
    put("gold", "ties.txt", "a\tb\t1\nc\td\t1\ne\tf\t2e0\n\n")
    copy_bad("gold", "gold")
    # LVQ: data sets (the first byte picks CSV, TSV, .npy, idx or .skl) and models.
    put("lvq_data", "digits.csv", b"\x00" + open(os.path.join(ROOT, "data", "samples", "digits", "test.csv"), "rb").read()[:3000])
    put("lvq_data", "header.csv", b"\x00label,x,y\ncat,1,2\ndog,3.5,-4\n\ncat,0,1e3\n")
    put("lvq_data", "last.tsv", b"\x011\t2\t10\r\n3\t4\t9\r\n")
    put("lvq_data", "images.idx", b"\x03" + bytes([0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2]) + bytes(range(8)))
    lvq_csv = "a,1,2\nb,3,4\na,1,3\nb,4,4\n"
    put("lvq_data", "small.skl", b"\x04" + written_by(binary, ["lvq", "convert", "{input}", "-o", "{output}"], lvq_csv,
                                                      input_name="input.csv"))
    for name in sorted(os.listdir(os.path.join(ROOT, "tests", "bad-inputs", "lvq-data"))):
        if name.endswith(".csv") or name.endswith(".tsv"):
            with open(os.path.join(ROOT, "tests", "bad-inputs", "lvq-data", name), "rb") as f:
                put("lvq_data", "bad-" + name, (b"\x01" if name.endswith(".tsv") else b"\x00") + f.read())
    put("skq", "small.skq", written_by(binary, ["lvq", "train", "--train", "{input}", "-o", "{output}", "-q", "--device",
                                                "cpu", "-p", "2", "--standardize"], lvq_csv + "a,2,2\nb,5,5\n",
                                       input_name="input.csv"))
    copy_bad("skq", "skq")
    # CCA tuples: the first byte picks text (0) or .sks (1).
    digits = open(os.path.join(ROOT, "data", "samples", "digits", "test.csv"), "rb").read()[:2000]
    put("cca_tuples", "digits.csv", b"\x00" + digits[:digits.rfind(b"\n") + 1])
    put("cca_tuples", "spaces.txt", b"\x00 1 2\t3 4\n\n5 6 7 8\r\n-1e-3 2 +3 4\n")
    put("cca_tuples", "small.sks", b"\x01" + written_by(binary, ["cca", "--input", "{input}", "--x", "0-1", "--y", "2-3",
                                                            "--convert", "{output}"],
                                                     "1,2,3,4\n5,6,7,9\n2,2,1,0\n3,1,4,1\n5,9,2,6\n",
                                                     input_name="input.csv"))
    for name in sorted(os.listdir(os.path.join(ROOT, "tests", "bad-inputs", "cca-tuples"))):
        if not name.startswith("_") and not name.endswith((".expect", ".args")):
            with open(os.path.join(ROOT, "tests", "bad-inputs", "cca-tuples", name), "rb") as f:
                put("cca_tuples", "bad-" + name, (b"\x01" if name.endswith(".sks") else b"\x00") + f.read())
    # Compressed text: the first byte picks .gz (0), .bz2 (1) or .zst (2).
    import bz2
    import gzip
    text = b"the red apple is sweet\nthe green tea is bitter\n" * 20
    put("compressed", "text.gz", b"\x00" + gzip.compress(text, mtime=0) + gzip.compress(b"second member\n", mtime=0))
    put("compressed", "text.bz2", b"\x01" + bz2.compress(text))
    put("compressed", "cut.gz", b"\x00" + gzip.compress(text, mtime=0)[:30])
    put("compressed", "plain.zst", b"\x02(\xb5/\xfdnot really")
    # Wikipedia dumps (and the same bytes as wikitext).
    page = ('<page><title>{t}</title><ns>{ns}</ns><id>1</id><revision><id>2</id><text xml:space="preserve">{w}'
            '</text></revision></page>\n')
    wiki = ("'''Paris''' is the [[capital city|capital]] of [[France]].{{Infobox|a={{b}}}}\n"
            "== History ==\n* A list &amp;lt;ref&amp;gt;x&amp;lt;/ref&amp;gt; item\n{| class=x\n| cell\n|}\n"
            "[[File:A.jpg|thumb|A [[b]] caption]] [http://example.org label] &amp;nbsp;&amp;#233;")
    put("wikipedia", "dump.xml", ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n'
                                  + page.format(t="Paris", ns=0, w=wiki) + page.format(t="Talk:Paris", ns=1, w="talk")
                                  + "</mediawiki>\n").encode())
    put("wikipedia", "wikitext.txt", wiki.replace("&amp;", "&").encode())
    put("wikipedia", "broken.xml", b"<mediawiki><page><title>x</titel></page></mediawiki>")
    put("postings_query", "ids.txt", b"\x00" + b"0 2\n1\t4\r\n3 3 3\n")
    put("postings_query", "words.txt", "\x01alpha beta\nCafé, 日本\nunknown alpha\n")
    for name in sorted(os.listdir(os.path.join(ROOT, "tests", "bad-inputs", "exp-query"))):
        if name.startswith("_") or name.endswith(".expect"):
            continue
        with open(os.path.join(ROOT, "tests", "bad-inputs", "exp-query", name), "rb") as f:
            put("postings_query", "bad_" + name, b"\x00" + f.read())


if __name__ == "__main__":
    main(sys.argv[1])
