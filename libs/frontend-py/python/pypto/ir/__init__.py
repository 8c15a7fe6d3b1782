"""Compiling IR programs (``@pl.program`` classes) into build directories."""

from pypto.ir.compiler import compile  # noqa: A004 - upstream's name

__all__ = ["compile"]
