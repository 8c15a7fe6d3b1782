"""Shared fixtures: every test compiles into its own temporary build directory."""

import os
import sys
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


@pytest.fixture
def write_kernel(tmp_path):
    """Writes a kernel module to a file (so diagnostics have real lines) and imports it."""
    import importlib.util

    def write(name: str, source: str):
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module, path

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
