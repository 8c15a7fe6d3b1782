"""Compiling IR programs (``@pl.program`` classes) into build directories."""

from pypto._core import GlobalVar
from pypto.ir.compiler import compile  # noqa: A004 - upstream's name

__all__ = ["GlobalVar", "compile"]
