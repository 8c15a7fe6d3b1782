"""Distributed (L3, several chips) programs: named so that model files import, refused at use."""

import dataclasses
from typing import Any, Optional, Sequence


@dataclasses.dataclass
class DistributedConfig:
    """The devices an L3 program spans. Building one is allowed (model files do it at import);
    compiling with one is not supported yet."""

    device_ids: Optional[Sequence[int]] = None
    num_sub_workers: int = 0
    options: Any = None


class DistributedCompiledProgram:
    """An L3 program compiled for several chips (not supported by this pypto yet)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("distributed (L3) programs are not supported by this pypto yet")

    @classmethod
    def from_dir(cls, work_dir, **kwargs):
        raise NotImplementedError(
            f"{work_dir}: distributed (L3) build directories are not supported by this pypto yet"
        )
