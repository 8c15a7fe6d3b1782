"""``pypto.runtime.run(program, *tensors, config=...)``: compile a ``@pl.program`` and run it once."""

import dataclasses

from pypto.runtime.config import RunConfig

# Passed to pypto.ir.compile by name or as its output directory, not as options.
_NOT_OPTIONS = {"platform", "backend_type", "save_kernels_dir"}


def run(program, *tensors, config=None):
    """Compiles ``program`` with ``config`` (default ``RunConfig()``) and, given tensors (and scalars)
    in the orchestration's parameter order, runs it once on them (a program whose entry has
    ``pl.dynamic`` dimensions is compiled for their shapes). Returns the compiled program, which
    runs again when called; with no tensors this only compiles."""
    from pypto import ir
    from pypto.language.program import DynamicProgram

    config = config or RunConfig()
    if isinstance(program, DynamicProgram):
        if not tensors:
            raise TypeError(
                f"{program.name}'s entry '{program.entry_name}' takes the pl.dynamic dimensions "
                f"{', '.join(program.dynamic_dims)} from its tensors: pass them to compile it"
            )
        program = program.specialise(*tensors)
    options = {f.name: getattr(config, f.name) for f in dataclasses.fields(RunConfig) if f.name not in _NOT_OPTIONS}
    compiled = ir.compile(program, platform=config.platform, backend_type=config.backend_type,
                          output_dir=config.save_kernels_dir, **options)
    if tensors:
        compiled(*tensors, config=config)
    return compiled
