"""Every module of the pypto package imports first, alone, in a fresh interpreter: no import cycle
hides behind the order in which a program happens to import the package."""

import pkgutil
import subprocess
import sys

import pytest


def _modules():
    import pypto

    names = ["pypto"]
    for info in pkgutil.walk_packages(pypto.__path__, "pypto."):
        # __main__-style tools are run, not imported.
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module", _modules())
def test_the_module_imports_first_in_a_fresh_interpreter(module):
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_language_names_the_jit_decorator():
    done = subprocess.run([sys.executable, "-c", "import pypto.language as pl; import pypto.jit; "
                           "assert pl.jit is pypto.jit.jit; from pypto.language import jit; assert jit is pl.jit"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
