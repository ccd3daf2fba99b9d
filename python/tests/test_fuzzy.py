"""simkit.fuzzy_hash, fuzzy_hash_file, fuzzy_compare and dedup against python-ssdeep (or
libfuzzy through ctypes where python-ssdeep is missing) and the `simkit` program."""
import ctypes
import ctypes.util
import itertools

import numpy as np
import pytest

import simkit
from conftest import SAMPLES, cli_error, run_cli, tsv

BOOST = SAMPLES / "boost"
FILES = sorted(p for p in BOOST.rglob("*") if p.is_file())


class Libfuzzy:
    """ssdeep's own library: python-ssdeep when installed, else libfuzzy via ctypes."""

    def __init__(self):
        try:
            import ssdeep
            self.hash, self.compare, self.hash_from_file = ssdeep.hash, ssdeep.compare, ssdeep.hash_from_file
            return
        except ImportError:
            pass
        lib = ctypes.CDLL(ctypes.util.find_library("fuzzy") or "libfuzzy.so.2")
        lib.fuzzy_hash_buf.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_char_p]
        lib.fuzzy_compare.argtypes = [ctypes.c_char_p, ctypes.c_char_p]

        def hash_bytes(data):
            out = ctypes.create_string_buffer(148)
            data = data.encode() if isinstance(data, str) else bytes(data)
            assert lib.fuzzy_hash_buf(data, len(data), out) == 0
            return out.value.decode()

        self.hash = hash_bytes
        self.compare = lambda a, b: lib.fuzzy_compare(a.encode(), b.encode())
        self.hash_from_file = lambda path: hash_bytes(open(path, "rb").read())


REFERENCE = Libfuzzy()


@pytest.mark.parametrize("size", [0, 1, 7, 64, 4095, 4096, 65537, 1 << 20, 3 << 20])
def test_hashes_of_random_bytes_equal_ssdeep(rng, size):
    data = rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
    assert simkit.fuzzy_hash(data) == REFERENCE.hash(data)


def test_hashes_of_text_like_bytes_and_buffers_equal_ssdeep(rng):
    # Few distinct bytes: many piece boundaries and runs of equal characters.
    data = rng.choice(np.frombuffer(b"ab \n", dtype=np.uint8), size=200_000)
    want = REFERENCE.hash(data.tobytes())
    assert simkit.fuzzy_hash(data.tobytes()) == want
    assert simkit.fuzzy_hash(bytearray(data.tobytes())) == want
    assert simkit.fuzzy_hash(memoryview(data.tobytes())) == want
    assert simkit.fuzzy_hash(data) == want  # a uint8 array, read in place
    text = "naïve café " * 5000
    assert simkit.fuzzy_hash(text) == REFERENCE.hash(text)


def test_file_hashes_equal_ssdeep_and_the_command_line():
    listed = tsv(run_cli("hash", "--no-header", *FILES).replace(',"', "\t").replace('"\n', "\n"))
    assert len(listed) == len(FILES)
    for path, (signature, name) in zip(FILES, listed):
        assert name == str(path)
        assert simkit.fuzzy_hash_file(path) == signature == REFERENCE.hash_from_file(str(path))
        assert simkit.fuzzy_hash(path.read_bytes()) == signature


def test_compare_equals_ssdeep():
    signatures = [REFERENCE.hash_from_file(str(p)) for p in FILES[:60]]
    for a, b in itertools.combinations(signatures, 2):
        assert simkit.fuzzy_compare(a, b) == REFERENCE.compare(a, b)
    assert simkit.fuzzy_compare(signatures[0], signatures[0]) == 100


def test_dedup_pairs_equal_the_command_line(tmp_path):
    for threshold in (1, 60):
        want = tsv(run_cli("dedup", BOOST, "--device", "cpu", "-t", threshold))
        got = simkit.dedup(BOOST, threshold=threshold, device="cpu")
        assert [[a, b, str(s)] for a, b, s in got] == want
        assert all(isinstance(s, int) for _, _, s in got)
    # The pairs and scores ssdeep's matching gives.
    pairs = simkit.dedup([str(p) for p in FILES[:50]], device="cpu")
    signatures = {str(p): REFERENCE.hash_from_file(str(p)) for p in FILES[:50]}
    expected = {(str(a), str(b)) for a, b in itertools.combinations(FILES[:50], 2)
                if REFERENCE.compare(signatures[str(a)], signatures[str(b)]) > 0}
    assert {(a, b) for a, b, _ in pairs} == expected
    for a, b, score in pairs:
        assert score == REFERENCE.compare(signatures[a], signatures[b])
    # An ssdeep list is read as the command line reads it.
    listing = tmp_path / "boost.ssdeep"
    listing.write_text(run_cli("hash", "-r", BOOST))
    assert [[a, b, str(s)] for a, b, s in simkit.dedup(listing, device="cpu")] == \
        tsv(run_cli("dedup", listing, "--device", "cpu"))


def test_edit_rate_pairs_equal_the_command_line():
    want = tsv(run_cli("dedup", BOOST, "--mode", "edit-rate", "--rate", 0.05, "--device", "cpu"))
    got = simkit.dedup(BOOST, mode="edit-rate", rate=0.05, device="cpu")
    assert [[a, b, f"{r:.6f}"] for a, b, r in got] == want
    assert got and all(0 <= r < 0.05 for _, _, r in got)


def test_bad_inputs_raise_the_command_lines_errors(tmp_path):
    with pytest.raises(simkit.InputError, match="malformed signature"):
        simkit.fuzzy_compare("3:abc", "not a signature")
    with pytest.raises(TypeError):
        simkit.fuzzy_hash(12)
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as error:
        simkit.fuzzy_hash_file(missing)
    assert error.value.strerror == cli_error("hash", missing)
    with pytest.raises(IsADirectoryError):
        simkit.fuzzy_hash_file(tmp_path)
    with pytest.raises(FileNotFoundError) as error:
        simkit.dedup([BOOST, missing])
    assert error.value.strerror == cli_error("dedup", BOOST, missing)
    with pytest.raises(ValueError, match="empty"):
        simkit.dedup([])
    with pytest.raises(simkit.UsageError) as error:
        simkit.dedup(BOOST, threshold=0)
    assert str(error.value) == cli_error("dedup", BOOST, "-t", 0)
    with pytest.raises(simkit.UsageError) as error:
        simkit.dedup(BOOST, mode="exact")
    assert str(error.value) == cli_error("dedup", BOOST, "--mode", "exact")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(simkit.InputError, match="holds no file"):
        simkit.dedup(empty)
