"""What a ``@pl.jit.extern`` declaration says, checked when the decorator runs: the core type, the
kernel source(s) and include directories (absolute, resolved against the stub's file), and whether
the AIV entry runs on both lanes."""

import dataclasses
import inspect
import json
import os
from typing import Optional

from pypto import _core

_CORE_TYPES = ("aic", "aiv", "mixed")
_OPTIONS = {"core_type", "source", "aic_source", "aiv_source", "dual_aiv_dispatch", "include_dirs"}


@dataclasses.dataclass(frozen=True)
class ExternDecl:
    core_type: str
    sources: dict  # core ("aic"/"aiv") -> absolute path
    include_dirs: tuple
    dual_aiv_dispatch: bool = False

    @staticmethod
    def from_options(stub, options: dict) -> "ExternDecl":
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise TypeError(f"@pl.jit.extern got unexpected option(s): {', '.join(unknown)}")
        core_type = options.get("core_type", "aiv")
        if core_type not in _CORE_TYPES:
            raise ValueError(f"@pl.jit.extern core_type must be 'aic', 'aiv', or 'mixed', got {core_type!r}")
        dual = options.get("dual_aiv_dispatch", False)
        if dual and core_type != "mixed":
            raise ValueError("@pl.jit.extern dual_aiv_dispatch=True requires core_type='mixed'")
        base = os.path.dirname(os.path.abspath(inspect.getsourcefile(stub) or "."))
        if core_type == "mixed":
            if options.get("aic_source") is None or options.get("aiv_source") is None:
                raise ValueError("@pl.jit.extern(core_type='mixed') requires both aic_source= and aiv_source=")
            sources = {core: _existing_file(base, options[f"{core}_source"]) for core in ("aic", "aiv")}
        else:
            source = options.get("source") or options.get(f"{core_type}_source")
            if source is None:
                raise ValueError(f"@pl.jit.extern(core_type={core_type!r}) requires source=")
            sources = {core_type: _existing_file(base, source)}
        return ExternDecl(core_type, sources, _include_dirs(base, options.get("include_dirs")), bool(dual))

    def fields(self) -> dict:
        """What the C++ frontend reads to build the kernel function(s)."""
        return {
            "core_type": self.core_type,
            "sources": dict(self.sources),
            "include_dirs": json.dumps(list(self.include_dirs)) if self.include_dirs else "",
            "dual_aiv_dispatch": self.dual_aiv_dispatch,
        }

    def content_key(self) -> str:
        """Changes whenever a source, a header it includes (as resolved now) or the include list does."""
        return ",".join(
            _core.extern_cache_key(path, list(self.include_dirs), core) for core, path in sorted(self.sources.items())
        )


def _existing_file(base: str, path) -> str:
    resolved = os.path.normpath(os.path.join(base, os.fspath(path)))
    if not os.path.isfile(resolved):
        raise ValueError(f"@pl.jit.extern source file not found: {resolved} (paths are relative to {base})")
    return resolved


def _include_dirs(base: str, include_dirs: Optional[object]) -> tuple:
    if include_dirs is None:
        return ()
    if isinstance(include_dirs, (str, bytes, os.PathLike)):
        raise TypeError(
            f"@pl.jit.extern include_dirs must be a sequence of paths, got {type(include_dirs).__name__}"
        )
    resolved = []
    for entry in include_dirs:
        path = os.path.normpath(os.path.join(base, os.fspath(entry)))
        if not os.path.isdir(path):
            raise ValueError(f"@pl.jit.extern include directory not found: {path} (paths are relative to {base})")
        resolved.append(path)
    return tuple(resolved)
