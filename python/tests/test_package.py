"""The package itself: version, documentation, type stubs, and the errors' mapping."""
import errno
import inspect
import pathlib
import re
import subprocess
import sys

import pytest

import simkit
from conftest import run_cli


def test_version_is_the_command_lines():
    assert run_cli("--version").strip() == f"simkit {simkit.__version__}"


def test_every_public_name_is_documented_and_typed():
    package = pathlib.Path(simkit.__file__).parent
    assert (package / "py.typed").exists()
    stubs = (package / "_simkit.pyi").read_text()
    for name in simkit.__all__:
        if name == "__version__":
            continue
        value = getattr(simkit, name)
        assert inspect.getdoc(value), f"{name} has no docstring"
        if name != "GLVQ":  # the Python class types itself
            assert re.search(rf"^(class|def) {name}\b", stubs, re.M), f"{name} is missing from _simkit.pyi"
    for cls in (simkit.WordVectors, simkit.PostingsIndex, simkit.Disco, simkit.SlidingCCA):
        for name, member in vars(cls).items():
            if not name.startswith("_"):
                assert re.search(rf"def {name}\b", stubs), f"{cls.__name__}.{name} is missing from _simkit.pyi"


def test_errors_are_value_and_os_errors():
    assert issubclass(simkit.InputError, ValueError) and issubclass(simkit.UsageError, ValueError)
    with pytest.raises(FileNotFoundError) as error:
        simkit.WordVectors.load("/nonexistent/vectors.vec")
    assert error.value.errno == errno.ENOENT
    assert error.value.strerror == "/nonexistent/vectors.vec: cannot open: No such file or directory"
    with pytest.raises(simkit.UsageError, match=r"^--device 'tpu': expected auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,\.\.\.$"):
        simkit.topk([[1.0]], [[1.0]], device="tpu")
    if simkit.cuda_device_count() == 0:
        with pytest.raises(simkit.UsageError, match="--device cuda"):
            simkit.topk([[1.0]], [[1.0]], device="cuda")
        assert simkit.resolve_device("auto") == "cpu"


def test_threads_can_be_limited():
    simkit.set_num_threads(1)
    try:
        assert simkit.get_num_threads() == 1
        assert simkit.topk([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], k=1, device="cpu")[1].tolist() == [[0]]
    finally:
        simkit.set_num_threads(0)
    assert simkit.get_num_threads() >= 1


def test_imports_without_numpy():
    # NumPy is needed by the calls that take or give arrays, not by the package itself.
    script = ("import sys\nsys.modules['numpy'] = None\nimport simkit\n"
              "assert simkit.fuzzy_hash(b'x' * 100) == '3:X:X'\nprint(simkit.__version__)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == simkit.__version__
