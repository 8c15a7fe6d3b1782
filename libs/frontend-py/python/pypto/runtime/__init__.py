"""Running compiled PyPTO programs: the run configuration and the compiled-program handle."""

from pypto.runtime.config import PLATFORMS, RunConfig
from pypto.runtime.compiled import CompiledProgram, list_platforms

__all__ = ["RunConfig", "CompiledProgram", "PLATFORMS", "list_platforms"]
