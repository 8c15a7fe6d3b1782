"""Run-time switches beside the arguments: the profiling and debugging ("DFX") options."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class DfxOptions:
    """Profiling switches of one run (upstream's names). ``enable_chip_swimlane`` is a collection
    level (0 off .. 4 full; ``True`` means 1)."""

    enable_chip_swimlane: int = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False

    def __post_init__(self):
        level = self.enable_chip_swimlane
        if isinstance(level, bool):
            object.__setattr__(self, "enable_chip_swimlane", int(level))
        elif not isinstance(level, int) or not 0 <= level <= 4:
            raise ValueError(f"enable_chip_swimlane must be a bool or a level 0..4, got {level!r}")

    def enabled(self) -> list:
        return [field.name for field in dataclasses.fields(self) if getattr(self, field.name)]

    def any(self) -> bool:
        return bool(self.enabled())

    def check_supported(self, platform: str) -> None:
        """None of these is implemented by this toolchain yet: asking for one says so."""
        if self.any():
            raise NotImplementedError(
                f"{', '.join(self.enabled())}: profiling and dump switches are not supported on {platform!r} "
                "by this pypto yet"
            )


# The name harnesses import.
_DfxOpts = DfxOptions
