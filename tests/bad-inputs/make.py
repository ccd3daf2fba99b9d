#!/usr/bin/env python3
"""Writes the malformed-input corpus: files simkit must refuse.

Each case is FORMAT/NAME plus NAME.expect: the phrases the one-line error must contain
(one a line; the file's own path is always required too). NAME.args, when present, holds
extra command-line arguments (one a line; @DIR@ stands for this folder). Files whose
names start with '_' are helpers, not cases.

Usage: make.py SIMKIT_BINARY   (the program writes the valid .skv that is then damaged)
Committed output is what tests/cli/bad_inputs_test.cpp runs; rerun after changing a case.
"""
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def case(fmt, name, data, expect, args=()):
    folder = os.path.join(HERE, fmt)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("latin-1"))
    with open(os.path.join(folder, name + ".expect"), "w") as f:
        f.write("\n".join(expect) + "\n")
    if args:
        with open(os.path.join(folder, name + ".args"), "w") as f:
            f.write("\n".join(args) + "\n")


def written_by(binary, args, text, input_name="input.txt", output_name="out"):
    """The bytes simkit writes when run as `binary ARGS...` with {input} (a file holding
    `text`) and {output} filled in: valid files for the cases below to damage."""
    with tempfile.TemporaryDirectory() as tmp:
        given, made = os.path.join(tmp, input_name), os.path.join(tmp, output_name)
        with open(given, "w", encoding="utf-8") as f:
            f.write(text)
        subprocess.run([binary] + [a.format(input=given, output=made) for a in args], check=True)
        with open(made, "rb") as f:
            return f.read()


def exp_index(lists):
    """The seed's ExpIndex: little-endian uint32 [length][ids...] a list."""
    return b"".join(struct.pack("<I", len(l)) + struct.pack("<%dI" % len(l), *l) for l in lists)


def helper(fmt, name, text):
    folder = os.path.join(HERE, fmt)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def w2v_binary(count, dim, rows):
    out = f"{count} {dim}\n".encode()
    for word, values in rows:
        out += word.encode("latin-1") + b" " + struct.pack(f"<{len(values)}f", *values) + b"\n"
    return out


def npy(descr, fortran, shape, data):
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"
    header = header.ljust(117) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def main(binary):
    for fmt in ("glove", "word2vec", "word2vec-binary", "npy", "skv", "any", "ssdeep", "exp-index", "exp-query", "skp",
                "postings-docs", "skd", "gold", "disco-corpus", "lvq-data", "skq", "cca-tuples"):
        shutil.rmtree(os.path.join(HERE, fmt), ignore_errors=True)
    rng = random.Random(20261122)

    # ssdeep hash lists (simkit dedup): the header, then one malformed line.
    head = "ssdeep,1.1--blocksize:hash:hash,filename\n"
    good = '3:abcdefgh:abcd,"fine.txt"\n'
    case("ssdeep", "no_block_size.txt", head + good + 'x:abc:def,"x"\n', [":3:1:", "expected a block size"])
    case("ssdeep", "one_part.txt", head + "3:abc\n", [":2:6:", "expected ':'"])
    case("ssdeep", "not_base64.txt", head + '3:ab!c:def,"x"\n', [":2:5:", "expected ':'"])
    case("ssdeep", "unquoted_name.txt", head + "3:abc:def,x\n", [":2:10:", "a file name"])
    case("ssdeep", "unclosed_name.txt", head + '3:abc:def,"x\n', [":2:13:", "closing the file name"])
    case("ssdeep", "long_part.txt", head + "3:" + "a" * 65 + ":b\n", [":2:3:", "at most 64 base64"])
    case("ssdeep", "long_block_size.txt", head + "12345678901234567890:a:b\n", [":2:1:", "at most 19 digits"])
    case("ssdeep", "binary_line.txt", head + good * 3 + "\x00\xff\x10\n", [":5:1:", "expected a block size"])
    case("ssdeep", "crlf_then_bad.txt", head.replace("\n", "\r\n") + good.replace("\n", "\r\n") + "3:a:b:c\r\n",
         [":3:6:", "or the end of the line"])

    # Any format: files with nothing usable in them.
    case("any", "empty.txt", "", ["empty file"])
    case("any", "random.bin", bytes(rng.randrange(256) for _ in range(4096)), [])
    case("any", "only_newlines.txt", "\n\n\n", ["expected a word followed by its values"])

    # GloVe text.
    case("glove", "short_row.txt", "a 1 2\nb 1\n", [":2", "expected a word and 2 values, found 2 fields"])
    case("glove", "not_a_number.txt", "a 1 2\nb 1 x2\n", [":2:5", "expected a number, found 'x2'"])
    case("glove", "nan.txt", "a 1 nan\n", [":1:5", "NaN or infinite"])
    case("glove", "infinite.txt", "a 1 2\nb -inf 2\n", [":2:3", "NaN or infinite"])
    case("glove", "overflow.txt", "a 1 1e39\n", [":1:5", "out of the float32 range"])
    case("glove", "norm_overflow.txt", "a 1 2\nb 3e38 3e38\n", [":2", "norm overflows float32"])
    case("glove", "duplicate.txt", "the 1 2\nof 3 4\nthe 5 6\n", [":3", "duplicate word 'the' (first at line 1)"])
    case("glove", "blank_line.txt", "a 1\n\nb 2\n", [":2", "empty line"])
    case("glove", "not_utf8.txt", "a 1\ncaf\xe9 2\n", [":2", "not valid UTF-8"])
    case("glove", "control_char.txt", "a 1\nb\x07c 2\n", [":2", "control character"])
    case("glove", "truncated.txt", "alpha 0.1 0.2 0.3\nbeta 0.4 0.", [":2", "expected a word and 3 values"])

    # word2vec text.
    case("word2vec", "count_mismatch.vec", "3 2\na 1 2\nb 1 2\n", [":1", "header says 3 rows but the file has 2"])
    case("word2vec", "absurd_rows.vec", "999999999999 300\na 1 2\n", [":1", "999999999999 rows"])
    case("word2vec", "absurd_but_indexable.vec", "4000000000 300\na 1 2\n", [":1", "header says 4000000000 rows"])
    case("word2vec", "absurd_dim.vec", "1 99999999\na 1\n", [":1", "absurd"])
    case("word2vec", "dim_zero.vec", "2 0\na\nb\n", [":1", "dimension 0"])
    case("word2vec", "rows_zero.vec", "0 5\n", [":1", "no rows"])
    case("word2vec", "wrong_dim.vec", "2 3\na 1 2 3\nb 1 2\n", [":3", "expected a word and 3 values"])
    case("word2vec", "duplicate.vec", "2 2\nx 1 2\nx 3 4\n", [":3", "duplicate word 'x' (first at line 2)"])

    # word2vec binary.
    good = [("a", [1.0, 2.0, 3.0]), ("b", [4.0, 5.0, 6.0])]
    case("word2vec-binary", "truncated.bin", w2v_binary(2, 3, good)[:-9], ["truncated", ":1"])
    case("word2vec-binary", "truncated_row.bin", w2v_binary(3, 1, [("a", [1.0]), ("b", [2.0]), ("c", [3.0])])[:-3],
         ["truncated: row 3", ": byte"])
    case("word2vec-binary", "nan.bin", w2v_binary(2, 3, [good[0], ("b", [1.0, float("nan"), 3.0])]),
         ["NaN or infinite", ": byte 25"])
    case("word2vec-binary", "infinite.bin", w2v_binary(2, 3, [good[0], ("b", [float("inf"), 1.0, 3.0])]),
         ["NaN or infinite", ": byte 21"])
    case("word2vec-binary", "extra_rows.bin", w2v_binary(1, 3, good), ["unexpected data after the 1 rows"])
    case("word2vec-binary", "duplicate.bin", w2v_binary(2, 3, [good[0], good[0]]), ["duplicate word 'a'", ": byte 19"])
    case("word2vec-binary", "not_utf8.bin", w2v_binary(2, 3, [good[0], ("\xff\xfe", [1.0, 2.0, 3.0])]),
         ["not valid UTF-8"])
    case("word2vec-binary", "absurd_rows.bin", b"4000000000 300\nab \x00\x00\x80\x3f",
         ["header says 4000000000 rows", "truncated or not word2vec"])
    case("word2vec-binary", "dim_zero.bin", b"2 0\na \nb \n", [":1", "dimension 0"], ["--input-format", "word2vec-binary"])
    case("word2vec-binary", "no_space.bin", b"1 3\n" + b"x" * 5000, ["no space within 4096 bytes"],
         ["--input-format", "word2vec-binary"])

    # .npy + word list.
    f4 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    helper("npy", "_words2.txt", "alpha\nbeta\n")
    words = ["--words", "@DIR@/_words2.txt"]
    case("npy", "dtype.npy", npy("<i4", "False", "(2, 3)", f4), ["dtype '<i4' is not supported"], words)
    case("npy", "fortran.npy", npy("<f4", "True", "(2, 3)", f4), ["Fortran-order"], words)
    case("npy", "one_dim.npy", npy("<f4", "False", "(6,)", f4), ["expected a 2-D matrix"], words)
    case("npy", "truncated.npy", npy("<f4", "False", "(2, 3)", f4[:-3]), [": byte 128", "does not match"], words)
    case("npy", "nan.npy", npy("<f4", "False", "(2, 3)", struct.pack("<6f", 1, 2, float("nan"), 4, 5, 6)),
         [": byte 136", "NaN"], words)
    case("npy", "bad_header.npy", npy("<f4", "Maybe", "(2, 3)", f4), ["expected True or False"], words)
    case("npy", "version.npy", b"\x93NUMPY\x07\x00\x10\x00" + b" " * 16, ["version 7", ": byte 6"], words)
    case("npy", "header_past_end.npy", b"\x93NUMPY\x01\x00\xff\x7f{}", ["runs past the end"], words)
    case("npy", "too_few_words.npy", npy("<f4", "False", "(3, 2)", f4), ["2 words for the 3 rows"], words)
    case("npy", "zero_rows.npy", npy("<f4", "False", "(0, 3)", b""), [": byte 8", "no rows"], words)
    case("npy", "zero_dim.npy", npy("<f4", "False", "(2, 0)", b""), [": byte 8", "dimension 0"], words)
    case("npy", "absurd_shape.npy", npy("<f4", "False", "(100000000, 300)", f4), [": byte 128", "does not match the 24 bytes"], words)
    case("npy", "no_words.npy", npy("<f4", "False", "(2, 3)", f4), ["--words"])

    # .skv, damaged copies of a valid file written by simkit itself.
    valid = written_by(binary, ["neighbors", "convert", "{input}", "-o", "{output}"],
                       "3 4\nalpha 1 2 3 4\nbeta -1 0.5 0 2\ngamma 0 0 1 0\n", "m.vec", "m.skv")
    flipped = bytearray(valid)
    flipped[130] ^= 0x10
    case("skv", "checksum.skv", bytes(flipped), ["checksum mismatch"])
    case("skv", "truncated.skv", valid[:-20], ["truncated: the header says"])
    case("skv", "trailing.skv", valid + b"\0", ["trailing bytes"])
    magic = bytearray(valid)
    magic[0:4] = b"SKX\0"
    case("skv", "bad_magic.skv", bytes(magic), [": byte 0", "wrong magic"], ["--input-format", "skv"])
    version = bytearray(valid)
    version[8] = 3
    case("skv", "version.skv", bytes(version), [": byte 8", ".skv version 3 is not supported"])
    rows = bytearray(valid)
    rows[16:24] = struct.pack("<Q", 10**15)
    case("skv", "absurd_rows.skv", bytes(rows), [": byte 16"])
    dim = bytearray(valid)
    dim[24:32] = struct.pack("<Q", 0)
    case("skv", "dim_zero.skv", bytes(dim), [": byte 16", "dimension 0"])
    case("skv", "header_only.skv", valid[:40], ["truncated"])

    # Posting lists (simkit postings query / build).
    good_lists = [[1, 5, 9], [], [2, 5, 7, 9, 11], [5]]
    helper("exp-query", "_index.bin", "")
    with open(os.path.join(HERE, "exp-query", "_index.bin"), "wb") as f:
        f.write(exp_index(good_lists))
    helper("exp-index", "_queries.txt", "0 2\n3\n")
    case("exp-index", "truncated_list.bin", exp_index(good_lists)[:40], [": byte 20", "truncated: list 2 says 5 ids"])
    case("exp-index", "stray_bytes.bin", exp_index(good_lists) + b"\1\0", [": byte 52", "2 stray bytes"])
    case("exp-index", "unsorted.bin", exp_index([[1, 5, 3]]), [": byte 12", "list 0", "not in increasing order"])
    case("exp-index", "duplicate.bin", exp_index([[2], [4, 4]]), [": byte 16", "duplicate id"])
    case("exp-index", "absurd_length.bin", struct.pack("<I", 0xFFFFFFF0) + b"\0" * 8, [": byte 0", "says 4294967280 ids"])
    case("exp-query", "out_of_range.txt", "0 2\n1 4\n", [":2:3:", "term id 4 is out of range", "4 terms"])
    case("exp-query", "not_a_number.txt", "0\n2 x7\n", [":2:3:", "expected a term id"])
    case("exp-query", "negative.txt", "-1 2\n", [":1:1:", "expected a term id"])
    case("exp-query", "blank_line.txt", "0 2\n\n3\n", [":2", "empty line"])
    case("exp-query", "huge_id.txt", "99999999999999999999999\n", [":1:1:", "expected a term id"])
    case("postings-docs", "not_utf8.txt", "good words\nbad \xff byte\n", [":2:5:", "not valid UTF-8"])
    valid = written_by(binary, ["postings", "build", "{input}", "-o", "{output}", "-q"],
                       "alpha beta\nbeta gamma\nalpha gamma delta\n")
    helper("skp", "_queries.txt", "alpha beta\n")
    flipped = bytearray(valid)
    flipped[140] ^= 1  # in the list offsets (the header is 128 bytes)
    case("skp", "checksum.skp", bytes(flipped), ["checksum mismatch"])
    case("skp", "truncated.skp", valid[:-9], ["truncated: the header says"])
    case("skp", "header_only.skp", valid[:30], ["truncated: shorter than an .skp header"])
    version = bytearray(valid)
    version[8:12] = struct.pack("<I", 7)
    case("skp", "version.skp", bytes(version), [": byte 8", ".skp version 7 is not supported"])
    terms = bytearray(valid)
    terms[16:24] = struct.pack("<Q", 10**15)
    case("skp", "absurd_terms.skp", bytes(terms), [": byte 16", "more than"])
    bitmaps = bytearray(valid)
    bitmaps[64:72] = struct.pack("<Q", 100)  # more bitmaps than terms
    case("skp", "bitmaps_count.skp", bytes(bitmaps), [": byte 64", "100 bitmaps", "more than its"])

    # DISCO (simkit disco): damaged models, bad gold standards, bad corpora.
    valid = written_by(binary, ["disco", "build", "{input}", "-o", "{output}", "-q"],
                       "the red apple is sweet\nthe red cherry is sweet\na green apple is sour\n")
    os.makedirs(os.path.join(HERE, "gold"), exist_ok=True)
    with open(os.path.join(HERE, "gold", "_model.skd"), "wb") as f:
        f.write(valid)
    flipped = bytearray(valid)
    flipped[70] ^= 1
    case("skd", "checksum.skd", bytes(flipped), ["checksum mismatch"])
    case("skd", "truncated.skd", valid[:-5], ["truncated: the header says"])
    case("skd", "header_only.skd", valid[:40], ["truncated: shorter than an .skd header"])
    version = bytearray(valid)
    version[8:12] = struct.pack("<I", 5)
    case("skd", "version.skd", bytes(version), [": byte 8", ".skd version 5 is not supported"])
    window = bytearray(valid)
    window[16:20] = struct.pack("<I", 1)
    case("skd", "window.skd", bytes(window), [": byte 16", "corrupt header"])
    # A model with its dense form (--features 4): the dense width damaged.
    dense = bytearray(written_by(binary, ["disco", "build", "{input}", "-o", "{output}", "-q", "--features", "4"],
                                 "the red apple is sweet\nthe red cherry is sweet\na green apple is sour\n"))
    words, features, word_bytes = struct.unpack("<QQQ", bytes(dense[24:32] + dense[40:56]))
    a64 = lambda x: (x + 63) // 64 * 64  # noqa: E731
    mi_at = a64(a64(a64(a64(a64(64 + (words + 1) * 8) + word_bytes) + words * 8) + (words + 1) * 8) + features * 4)
    width_at = a64(mi_at + features * 4)
    dense[width_at:width_at + 8] = struct.pack("<Q", 1 << 40)
    case("skd", "dense_width.skd", bytes(dense), [f": byte {width_at}", "corrupt dense width"])
    case("gold", "no_tabs.txt", "love sex 6.77\n", [":1:", "expected 'word1<TAB>word2<TAB>score'"])
    case("gold", "bad_score.txt", "love\tsex\t6.77\ntiger\tcat\tseven\n", [":2:11:", "expected a score"])
    case("gold", "empty.txt", "\n\n", ["no word pairs"])
    case("gold", "not_utf8.txt", "caf\xe9\tcoffee\t8\n", [":1:4:", "not valid UTF-8"])
    case("disco-corpus", "not_utf8.txt", "good words here\nbad \xc3\x28 byte\n", [":2:5:", "not valid UTF-8"])
    case("disco-corpus", "only_stopwords.txt", "the and of\na the\n", ["no word that could be paired"])
    case("disco-corpus", "broken_dump.xml",
         "<mediawiki>\n<page>\n<title>Cats</title><ns>0</ns>\n<revision><text>cats eat</txt></revision>\n</page>\n",
         [":4:", "not a Wikipedia XML dump", "mismatched tag"])
    case("disco-corpus", "cut_dump.xml", "<mediawiki>\n<page>\n<title>Cats</title><ns>0</ns>\n<revision><text>cats eat",
         ["not a Wikipedia XML dump"])

    # LVQ (simkit lvq train --train FILE): training data; damaged models for predict.
    case("lvq-data", "ragged.csv", "a,1,2\nb,3,4\nb,5\n", [":3", "2 fields, expected 3", "ragged"])
    case("lvq-data", "nan.csv", "a,1,2\nb,3,nan\n", [":2:3:", "feature 2", "NaN"])
    case("lvq-data", "word.tsv", "a\t1\t2\nb\tx\t2\n", [":2:2:", "expected a number"])
    case("lvq-data", "missing_label.csv", "a,1,2\n,3,4\n", [":2:1:", "missing label"])
    case("lvq-data", "one_class.csv", "a,1,2\na,3,4\n", ["at least 2 classes"])
    case("lvq-data", "too_few.csv", "a,1,2\na,3,4\nb,5,6\n", ["has 1 sample, fewer than the 2"],
         ["--prototypes-per-class", "2"])
    case("lvq-data", "empty.csv", "\n\n", ["no data rows"])
    case("lvq-data", "not_utf8.csv", "caf\xe9,1,2\n", ["byte 3", "not UTF-8"])
    case("lvq-data", "short.npy", npy("<f4", "False", "(2, 3)", struct.pack("<5f", 1, 2, 3, 4, 5)),
         ["does not match the 20 data bytes"], ["--train-labels", "@DIR@/_labels.txt"])
    case("lvq-data", "nan.npy", npy("<f4", "False", "(1, 2)", struct.pack("<2f", 1, float("nan"))),
         ["row 1 feature 2", "NaN"], ["--train-labels", "@DIR@/_labels.txt"])
    case("lvq-data", "labels_count.npy", npy("<f4", "False", "(3, 1)", struct.pack("<3f", 1, 2, 3)),
         ["_labels.txt", "2 labels for the 3 samples of"], ["--train-labels", "@DIR@/_labels.txt"])
    case("lvq-data", "cut-images-idx3-ubyte", b"\0\0\x08\x03\0\0\0\x02\0\0\0\x02\0\0\0\x02\x01\x02",
         ["idx sizes call for 8 data bytes"])
    case("lvq-data", "type-images-idx3-ubyte", b"\0\0\x0b\x03\0\0\0\x01\0\0\0\x01\0\0\0\x01\x01\x02",
         ["byte 2", "element type 0x0B"])
    helper("lvq-data", "_labels.txt", "a\nb\n")
    data = "a,1,2\nb,3,4\na,1,3\nb,4,4\n"
    valid = written_by(binary, ["lvq", "train", "--train", "{input}", "-o", "{output}", "-q", "--device", "cpu"], data,
                       input_name="input.csv")
    helper("skq", "_data.csv", data)
    flipped = bytearray(valid)
    flipped[len(valid) - 12] ^= 1
    case("skq", "checksum.skq", bytes(flipped), ["checksum mismatch"])
    case("skq", "truncated.skq", valid[:-3], ["truncated: the header says"])
    case("skq", "header_only.skq", valid[:30], ["truncated: shorter than an .skq header"])
    version = bytearray(valid)
    version[8:12] = struct.pack("<I", 9)
    case("skq", "version.skq", bytes(version), [": byte 8", ".skq version 9 is not supported"])
    classes = bytearray(valid)
    classes[32:40] = struct.pack("<Q", 10**17)
    case("skq", "absurd_classes.skq", bytes(classes), [": byte 16", "corrupt header"])
    case("skq", "data_model.skq", written_by(binary, ["lvq", "convert", "{input}", "-o", "{output}"], data,
                                             input_name="input.csv"), ["not an .skq file (wrong magic)"])


    # CCA tuples (simkit cca --input FILE --x 0 --y 1-2 --window 2): text and .sks streams.
    case("cca-tuples", "ragged.csv", "1,2,3\n4,5,6\n7,8\n", [":3", "expected 3 fields"])
    case("cca-tuples", "nan.csv", "1,2,3\n4,nan,6\n", [":2", "field 2", "NaN"])
    case("cca-tuples", "word.tsv", "1\t2\t3\n4\tx\t6\n", [":2", "field 2", "expected a number"])
    case("cca-tuples", "nul.csv", "1,2,3\n4,5\x006\n", [":2", "NUL byte"])
    case("cca-tuples", "narrow.csv", "1,2\n3,4\n", ["column 2 was asked for", "2 columns"])
    case("cca-tuples", "singular.csv", "1,1,2\n1,2,3\n1,3,5\n", ["tuple 2", "singular covariance of X", "--ridge"])
    stream = written_by(binary, ["cca", "--input", "{input}", "--x", "0", "--y", "1-2", "--convert", "{output}"],
                        "1,2,3\n4,5,7\n2,9,1\n0,1,1\n", input_name="input.csv")
    case("cca-tuples", "truncated.sks", stream[:-5], ["cut short"])
    case("cca-tuples", "no_end.sks", stream[:-8], ["cut short in a block header"])
    flipped = bytearray(stream)
    flipped[40] ^= 4
    case("cca-tuples", "checksum.sks", bytes(flipped), ["byte 24", "block checksum mismatch"])
    header = bytearray(stream)
    header[12] = 9
    case("cca-tuples", "header.sks", bytes(header), ["byte 16", "header checksum mismatch"])
    case("cca-tuples", "magic.sks", b"SKSTRAM!" + stream[8:], ["byte 0", "not a simkit tuple stream"])
    case("cca-tuples", "trailing.sks", stream + b"\0", ["bytes after the end block"])


if __name__ == "__main__":
    main(sys.argv[1])
