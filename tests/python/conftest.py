"""Shared fixtures: every test compiles into its own temporary build directory."""

import contextlib
import os
import re
import sys
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))


@pytest.fixture(autouse=True)
def build_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    # Every test compiles what it runs; test_jit_disk_cache.py turns the disk cache on for itself.
    monkeypatch.setenv("PYPTO_CACHE_DIR", "off")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "build_output"


@pytest.fixture(autouse=True)
def pto_modules_conform(tmp_path):
    """After each test, every .pto it wrote (under its temporary directory) is checked against the PTO
    dialect's op table (tests/python/pto_dialect.py); a module that does not conform fails the test."""
    yield
    from pto_dialect import assert_conforms

    assert_conforms(tmp_path)


def import_source(path: Path, source: str):
    """Writes a kernel module to `path` (so diagnostics have real lines) and imports it; the module's
    `path` attribute is where it lies."""
    import importlib.util

    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.path = path
    return module


def kernels_fixture(file_name: str, source: str):
    """A module-scoped `kernels` fixture: `source` imported once for the whole test file."""

    @pytest.fixture(scope="module")
    def kernels(tmp_path_factory):
        return import_source(tmp_path_factory.mktemp("kernels") / file_name, source)

    return kernels


@pytest.fixture
def write_kernel(tmp_path):
    """Writes a kernel module to a file and imports it: (module, path)."""

    def write(name: str, source: str):
        module = import_source(tmp_path / f"{name}.py", source)
        return module, module.path

    return write


@pytest.fixture
def write_dsl(write_kernel):
    """write_kernel for DSL text: `import pypto.language as pl` and a blank line go first."""
    return lambda name, source: write_kernel(name, "import pypto.language as pl\n\n" + source)


def pypto_run_path() -> str:
    return os.environ["PYPTO_RUN"]


def pypto_opt_path() -> str:
    return os.environ["PYPTO_OPT"]


@pytest.fixture(autouse=True)
def fresh_example_cache():
    """The example module is shared by tests: each starts without compiled specialisations."""
    import hello_add

    hello_add.vector_add.clear_cache()


def is_poison(region) -> bool:
    """Whether every element of `region` (a tensor or a view of one) still holds, bit for bit, the
    poison pattern a simulator fills a pl.Out tensor with before a run: no kernel wrote any of it
    (seed 001, "A pl.Out region the kernel does not write is undefined"; pypto/runtime/unwritten.py)."""
    import torch
    from pypto.runtime.unwritten import poison

    pattern = torch.empty(region.shape, dtype=region.dtype)
    poison(pattern)
    bits = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[region.element_size()]
    return torch.equal(region.contiguous().view(bits), pattern.view(bits))


@contextlib.contextmanager
def unwritten(*reports: str):
    """Expects the run inside to warn UnwrittenOutputWarning with exactly these reports (one per
    pl.Out tensor, as pypto.runtime.unwritten.unwritten_report words them, in parameter order); with
    none, expects every pl.Out element to have been written (no such warning)."""
    from pypto.runtime.unwritten import UnwrittenOutputWarning

    if not reports:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnwrittenOutputWarning)
            yield
        return
    with pytest.warns(UnwrittenOutputWarning, match="^" + re.escape("; ".join(reports)) + "$"):
        yield
