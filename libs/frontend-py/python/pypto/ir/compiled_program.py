"""``pypto.ir.compiled_program``: where upstream's harnesses import ``CompiledProgram`` from. The class
lives in ``pypto.runtime.compiled``, next to the build directories it runs."""

from pypto.runtime.compiled import CompiledProgram, Parameter

__all__ = ["CompiledProgram", "Parameter"]
