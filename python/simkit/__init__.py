"""simkit: finds what is alike, fast, on the CPU or a GPU.

Nearest word vectors and analogies (WordVectors), top-k search over any vectors (topk),
ssdeep-compatible fuzzy hashes and near-duplicate files (fuzzy_hash, fuzzy_hash_file,
fuzzy_compare, dedup), posting-list intersection (intersect, PostingsIndex),
distributional word similarity (Disco), nearest-prototype classifiers (GLVQ, a
scikit-learn estimator) and the canonical correlations of streams over a sliding window
(SlidingCCA). The answers are those of the `simkit` command line; see docs/python.md.

Calls that can use a GPU take device="auto" (a GPU when present), "cpu", "cuda" or
"cuda:N". Arrays of float32 (uint32 for ids) in C order are read without a copy; other
real dtypes are converted once. Errors: simkit.UsageError and simkit.InputError (both
ValueError) carry the command line's messages; files that cannot be read raise OSError
(FileNotFoundError, IsADirectoryError, ...); failures of the machine RuntimeError.
"""
from ._simkit import (
    Disco,
    InputError,
    PostingsIndex,
    SlidingCCA,
    UsageError,
    WordVectors,
    __version__,
    cuda_built,
    cuda_device_count,
    dedup,
    fuzzy_compare,
    fuzzy_hash,
    fuzzy_hash_file,
    get_num_threads,
    intersect,
    resolve_device,
    set_num_threads,
    topk,
)
from ._glvq import GLVQ

__all__ = [
    "Disco",
    "GLVQ",
    "InputError",
    "PostingsIndex",
    "SlidingCCA",
    "UsageError",
    "WordVectors",
    "__version__",
    "cuda_built",
    "cuda_device_count",
    "dedup",
    "fuzzy_compare",
    "fuzzy_hash",
    "fuzzy_hash_file",
    "get_num_threads",
    "intersect",
    "resolve_device",
    "set_num_threads",
    "topk",
]
