"""Compiling IR programs (``@pl.program`` classes) into build directories."""

from pypto._core import GlobalVar
from pypto.ir.compiler import compile  # noqa: A004 - upstream's name
from pypto.ir.pass_manager import OptimizationStrategy, PassManager

__all__ = ["GlobalVar", "OptimizationStrategy", "PassManager", "compile"]
