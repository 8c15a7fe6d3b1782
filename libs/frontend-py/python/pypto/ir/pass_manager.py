"""The pass pipeline as upstream's ``pypto.ir.pass_manager`` offers it to programs and harnesses.

Programs import ``OptimizationStrategy`` to pass ``RunConfig(strategy=...)``; tools ask a
``PassManager`` for the pipeline's pass names or run it on a ``@pl.program``. There is one pipeline
here (``pypto-opt --list-passes`` prints it with each pass's contract), so every strategy selects it.
"""

from enum import Enum

from pypto import _core


class OptimizationStrategy(Enum):
    Default = "Default"  # the whole pipeline, from the DSL program to kernels and orchestration


class PassDumpLevel(Enum):
    """How much ``dump_passes`` writes: ``True`` is ``CONCISE``, ``False`` is ``NONE``."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


def coerce_dump_level(dump_passes) -> PassDumpLevel:
    if isinstance(dump_passes, PassDumpLevel):
        return dump_passes
    if isinstance(dump_passes, bool):
        return PassDumpLevel.CONCISE if dump_passes else PassDumpLevel.NONE
    raise TypeError(f"dump_passes must be a bool or a PassDumpLevel, got {dump_passes!r}")


class PassManager:
    """The pipeline for one strategy: ``PassManager.get_strategy().run_passes(program)``."""

    def __init__(self, strategy: OptimizationStrategy = OptimizationStrategy.Default, platform: str = "a2a3sim"):
        if not isinstance(strategy, OptimizationStrategy):
            raise TypeError(f"strategy must be an OptimizationStrategy, got {strategy!r}")
        self.strategy = strategy
        self.platform = platform

    @classmethod
    def get_strategy(cls, strategy: OptimizationStrategy = OptimizationStrategy.Default, **options) -> "PassManager":
        return cls(strategy, **options)

    def get_pass_names(self) -> list:
        return list(_core.pipeline_passes())

    @property
    def pass_names(self) -> list:
        return self.get_pass_names()

    def run_passes(self, program, dump_ir: bool = False, output_dir=None):
        """The lowered program (``_core.Program``); with ``dump_ir``, the IR after each pass is
        written to ``output_dir`` as NN_after_<Pass>.py."""
        if dump_ir and output_dir is None:
            raise ValueError("run_passes(dump_ir=True) needs output_dir")
        return _core.lower(program, self.platform, False, str(output_dir) if dump_ir else None)


__all__ = ["OptimizationStrategy", "PassDumpLevel", "coerce_dump_level", "PassManager"]
