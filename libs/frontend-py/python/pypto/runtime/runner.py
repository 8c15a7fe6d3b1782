"""Run-time switches beside the arguments: the profiling and debugging ("DFX") options.
``RunConfig`` is importable from here too, where upstream's system tests look for it."""

import dataclasses

from pypto.runtime import platforms
from pypto.runtime.config import RunConfig  # noqa: F401  (re-exported)


@dataclasses.dataclass(frozen=True)
class DfxOptions:
    """Profiling and dump switches of one run (upstream's names). ``enable_chip_swimlane`` is a
    collection level (0 off .. 4 full; ``True`` means 1); ``enable_dump_args`` is 0 off, 1 the
    ``pl.dump_tag``'ed tensors, 2 every argument, 3 every argument's metadata and the tagged payloads;
    ``enable_dep_gen`` writes the dependency graph of every submit (``deps.json``)."""

    enable_chip_swimlane: int = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False

    def __post_init__(self):
        for name, top in (("enable_chip_swimlane", 4), ("enable_dump_args", 3)):
            level = getattr(self, name)
            if isinstance(level, bool):
                object.__setattr__(self, name, int(level))
            elif not isinstance(level, int) or not 0 <= level <= top:
                raise ValueError(f"{name} must be a bool or a level 0..{top}, got {level!r}")

    def enabled(self) -> list:
        return [field.name for field in dataclasses.fields(self) if getattr(self, field.name)]

    def any(self) -> bool:
        return bool(self.enabled())

    def check_supported(self, platform: str) -> None:
        """The simulators write the args dump, the chip swimlane and the dependency graph (into
        ``<build dir>/dfx_outputs``); the other switches are not implemented, and a device platform needs
        a device."""
        if not self.any():
            return
        if not platforms.is_simulator(platform):
            raise NotImplementedError(
                f"{', '.join(self.enabled())}: profiling and dump outputs on {platform!r} need an Ascend device, "
                "which this pypto does not drive; run on 'a2a3sim' or 'a5sim' for the args dump, the swimlane "
                "and the dependency graph"
            )
        missing = [name for name in _NOT_IMPLEMENTED if getattr(self, name)]
        if missing:
            raise NotImplementedError(
                f"{', '.join(missing)}: not supported on {platform!r} by this pypto yet "
                "(enable_dump_args, enable_chip_swimlane and enable_dep_gen are)"
            )


# Switches this toolchain accepts but cannot honour on any platform yet.
_NOT_IMPLEMENTED = ("enable_pmu", "enable_scope_stats")


# The name harnesses import.
_DfxOpts = DfxOptions
