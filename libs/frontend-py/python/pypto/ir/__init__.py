"""Compiling IR programs (``@pl.program`` classes) into build directories."""

import enum

from pypto._core import GlobalVar
from pypto.ir.compiler import compile  # noqa: A004 - upstream's name
from pypto.ir.pass_manager import OptimizationStrategy, PassManager



class ParamDirection(str, enum.Enum):
    """How a function uses a tensor parameter (a str, so it equals the direction names of
    ``CompiledProgram.parameters``)."""

    In = "In"
    Out = "Out"
    InOut = "InOut"


__all__ = ["GlobalVar", "OptimizationStrategy", "ParamDirection", "PassManager", "compile"]
