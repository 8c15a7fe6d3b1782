"""Build directories as the unit harnesses run: ``execute_compiled(work_dir, args)``.

Compiling writes ``pypto_manifest.json`` next to the artifacts: the platform, and every parameter of
the program in call order with its kind, dtype, shape and direction (and the value of a scalar fixed
at compile time). With ``lowered_program.py`` (the lowered IR, printed as a ``@pl.program`` class) it
is enough to run the directory again in another process, without the program's source.
"""

import json
import os
from pathlib import Path
from typing import Optional, Sequence

from pypto import _core
from pypto.runtime.compiled import CompiledProgram, Parameter, live_program

MANIFEST = "pypto_manifest.json"
_FORMAT = 1


def write_manifest(output_dir, platform: str, program_name: str, parameters: Sequence[Parameter]) -> None:
    manifest = {
        "format": _FORMAT,
        "pypto_version": _core.version(),
        "platform": platform,
        "program": program_name,
        "parameters": [p.to_json() for p in parameters],
    }
    Path(output_dir, MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def read_manifest(work_dir) -> dict:
    path = Path(work_dir, MANIFEST)
    if not Path(work_dir).is_dir():
        raise FileNotFoundError(f"build directory {str(work_dir)!r} does not exist")
    if not path.is_file():
        raise FileNotFoundError(
            f"{str(work_dir)!r} is not a pypto build directory: {MANIFEST} is missing "
            "(compile the program with fn.compile(...) or pypto.ir.compile(...) first)"
        )
    manifest = json.loads(path.read_text())
    if manifest.get("format") != _FORMAT:
        raise ValueError(f"{path}: manifest format {manifest.get('format')!r} is not {_FORMAT}; compile again")
    return manifest


# Directories loaded from disk, by (path, platform); reloaded when the lowered program changes.
_LOADED = {}


def load_compiled(work_dir, platform: Optional[str] = None) -> CompiledProgram:
    """The compiled program in ``work_dir``, ready to call; ``platform`` defaults to the one it was
    compiled for. A directory this process compiled is reused as it is (with its open session)."""
    manifest = read_manifest(work_dir)
    compiled_for = manifest["platform"]
    platform = platform or compiled_for
    if platform != compiled_for:
        raise ValueError(
            f"{str(work_dir)!r} was compiled for {compiled_for!r}, not {platform!r}: its kernels are laid out "
            f"for that SoC; compile again with platform={platform!r}"
        )
    live = live_program(str(work_dir))
    if live is not None:
        return live
    lowered = Path(work_dir, "lowered_program.py")
    key = (os.path.realpath(work_dir), platform)
    stamp = lowered.stat().st_mtime_ns if lowered.exists() else None
    cached = _LOADED.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    artifacts = _core.load_compiled(str(work_dir), platform)
    parameters = [Parameter.from_json(entry) for entry in manifest["parameters"]]
    program = CompiledProgram(artifacts, parameters)
    _LOADED[key] = (stamp, program)
    return program


def execute_compiled(work_dir, args, *, platform: Optional[str] = None, device_id: int = 0, dfx=None) -> None:
    """Runs the program compiled into ``work_dir`` with ``args`` (torch tensors, and scalars as Python
    numbers, 0-d tensors or ctypes values, in parameter order); outputs are written into the tensors.

    ``device_id`` selects a device on device platforms; the simulators have one. ``dfx`` carries the
    profiling switches of ``pypto.runtime.runner.DfxOptions``: on a simulator the args dump, the chip
    swimlane and the dependency graph are written into ``<work_dir>/dfx_outputs/``.
    """
    if not isinstance(device_id, int) or device_id < 0:
        raise ValueError(f"device_id must be a non-negative int, got {device_id!r}")
    if dfx is not None:
        dfx.check_supported(platform or read_manifest(work_dir)["platform"])
    program = load_compiled(work_dir, platform)
    if dfx is not None:
        # The run writes them into <work_dir>/dfx_outputs/.
        _core.set_dfx(program._artifacts, dfx.enable_dump_args, dfx.enable_chip_swimlane, bool(dfx.enable_dep_gen))
    program._run_in_place(args)
