"""``pypto.ir.compile(program, ...)``: a ``@pl.program`` class (or any IR program) into a build directory."""

import dataclasses
import os

from pypto import _core
from pypto.backend import platform_for
from pypto.runtime.build_dir import write_manifest
from pypto.runtime.compiled import CompiledProgram, Parameter
from pypto.runtime.config import RunConfig, new_build_dir, remove_if_empty, verify_requested
from pypto.runtime import time_report
from pypto.runtime.debug.run_script import write_run_script
from pypto.runtime.declared_inputs import warn_written_inputs

_CONFIG_FIELDS = {field.name for field in dataclasses.fields(RunConfig)}


@time_report.counted
def compile(program, *, backend_type=None, platform=None, output_dir=None, **options):  # noqa: A001
    """Lowers ``program`` through the pass pipeline, writes its artifacts into ``output_dir`` (by
    default a fresh ``build_output/<program>_<timestamp>``) and returns the compiled program.

    ``options`` are ``RunConfig`` fields (``dump_passes=True`` writes the IR after each pass);
    anything else is refused with its name."""
    unknown = sorted(set(options) - _CONFIG_FIELDS)
    if unknown:
        raise TypeError(f"pypto.ir.compile got unexpected option(s): {', '.join(unknown)}")
    from pypto.language.program import DynamicProgram

    if isinstance(program, DynamicProgram):
        raise TypeError(
            f"{program.name}'s entry '{program.entry_name}' takes the pl.dynamic dimensions "
            f"{', '.join(program.dynamic_dims)} from its tensors, so it is compiled for their shapes: "
            f"pypto.ir.compile({program.name}.specialise(*tensors)), or pypto.runtime.run({program.name}, *tensors)"
        )
    if not isinstance(program, _core.Program):
        raise TypeError(
            f"pypto.ir.compile expects a program (a @pl.program class), got {type(program).__name__}; "
            "compile a @pl.jit function with fn.compile(*args)"
        )
    config = RunConfig(platform=platform_for(backend_type, platform), **options)
    out = new_build_dir(config, program.name) if output_dir is None else os.path.abspath(output_dir)
    dump_dir = os.path.join(out, "passes_dump") if config.dump_passes else None
    try:
        lowered = _core.lower(program, config.platform, verify_requested(), dump_dir)
        artifacts = _core.compile(lowered, config.platform, str(out), config.task_window,
                                  ring_heap=config.ring_heap_sizes, ring_dep_pool=config.ring_dep_pool_sizes,
                                  **config.compile_dfx())
    except BaseException:
        if output_dir is None and not config.save_kernels_dir:  # new_build_dir made it: leave none behind
            remove_if_empty(out)
        raise
    parameters = entry_parameters(lowered)
    write_manifest(out, config.platform, program.name, parameters)
    write_run_script(out, config.platform, program.name, parameters)
    return CompiledProgram(artifacts, parameters)


def entry_parameters(lowered) -> list:
    """The parameters of a lowered program's orchestration entry, as its build directory records them.
    Warns at each plain ``pl.Tensor`` parameter a kernel writes (``pypto.runtime.declared_inputs``)."""
    entry = next(f for f in lowered.functions.values() if f.name == lowered.entry_name)
    params = entry.params
    warn_written_inputs(entry.name, params)
    return [
        Parameter(
            name=p["name"],
            kind=p["kind"],
            dtype=p["dtype"],
            direction="Scalar" if p["kind"] == "scalar" else p["direction"],
            # -1: a dynamic axis of a program compiled for every extent (ir::kDynamicExtent).
            shape=tuple(None if dim == -1 else dim for dim in p["shape"]) if "shape" in p else None,
            declared_in_written_by=p.get("declared_in_written_by"),
        )
        for p in params
    ]
