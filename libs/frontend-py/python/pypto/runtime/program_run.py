"""``pypto.runtime.run(program, *tensors, config=...)``: compile a ``@pl.program`` and run it once."""

import dataclasses

from pypto.runtime.config import RunConfig

# Passed to pypto.ir.compile by name or as its output directory, not as options.
_NOT_OPTIONS = {"platform", "backend_type", "save_kernels_dir"}


def run(program, *tensors, config=None):
    """Compiles ``program`` with ``config`` (default ``RunConfig()``) and, given tensors (and scalars)
    in the orchestration's parameter order, runs it once on them. Returns the compiled program, which
    runs again when called; with no tensors this only compiles."""
    from pypto import ir

    config = config or RunConfig()
    options = {f.name: getattr(config, f.name) for f in dataclasses.fields(RunConfig) if f.name not in _NOT_OPTIONS}
    compiled = ir.compile(program, platform=config.platform, backend_type=config.backend_type,
                          output_dir=config.save_kernels_dir, **options)
    if tensors:
        compiled(*tensors, config=config)
    return compiled
