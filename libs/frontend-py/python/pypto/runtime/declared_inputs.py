"""Entry parameters declared a plain ``pl.Tensor`` that a kernel writes.

A plain ``pl.Tensor`` parameter of the orchestration entry (a ``@pl.jit`` entry, or a
``@pl.program``'s Opaque / Orchestration entry) is In: on a device the runtime uploads it and skips
its device-to-host copy-back, so what a kernel writes into it is lost and the caller's tensor keeps
what it held (seed 001, "Output parameter direction"). The compiler still orders the kernels writing
it (DeriveCallDirections promotes it to Out / InOut inside the program, and records the entry's
declaration), and:

- compiling warns at the parameter with a ``WrittenInputWarning`` naming the kernel that writes it
  and the direction to declare;
- the simulators run as the device does: the kernels get a private copy of the caller's tensor for
  that run, and the caller's tensor is left as it was.

``RunConfig(copy_back_inputs=True)``, or ``$PYPTO_COPY_BACK_INPUTS=1`` for a program run unmodified
(``0`` forces the device's behaviour), copies the kernels' writes back into the caller's tensor, as
this toolchain did before.
"""

import os
import warnings


class WrittenInputWarning(UserWarning):
    """A plain ``pl.Tensor`` parameter of the entry (In) is written by a kernel: on a device the
    writes never reach the caller's tensor."""


def declared_direction_fix(direction: str) -> str:
    """The annotation to declare for a parameter the compiler derived ``direction`` (Out or InOut) for."""
    if direction == "InOut":
        return "pl.InOut[pl.Tensor[...]] (the kernel reads it and writes it)"
    return "pl.Out[pl.Tensor[...]] (the kernel only writes it; pl.InOut[...] if it must see the values passed)"


def written_input_message(entry: str, param: str, kernel: str, direction: str) -> str:
    return (
        f"parameter '{param}' of '{entry}' is a plain pl.Tensor, which the entry passes In, but kernel "
        f"'{kernel}' writes it: on a device its copy-back to the host is skipped, so the kernel's writes "
        f"are lost and '{param}' keeps what the caller passed (the simulators do the same); declare it "
        f"{declared_direction_fix(direction)}"
    )


def warn_written_inputs(entry: str, params) -> None:
    """Warns once for each parameter dict of ``entry`` (as ``_core`` describes the lowered entry's
    parameters) that was declared In and is written by a kernel."""
    for param in params:
        kernel = param.get("declared_in_written_by")
        if kernel is None:
            continue
        message = written_input_message(entry, param["name"], kernel, param["direction"])
        warnings.warn(f"{param['span']}: {message}", WrittenInputWarning, stacklevel=4)


def copy_back_inputs(config) -> bool:
    """Whether this run copies the kernels' writes into plain ``pl.Tensor`` entry parameters:
    ``RunConfig.copy_back_inputs`` (False by default), overridden by ``$PYPTO_COPY_BACK_INPUTS`` (0 or 1)."""
    configured = bool(getattr(config, "copy_back_inputs", False)) if config is not None else False
    return {"0": False, "1": True}.get(os.environ.get("PYPTO_COPY_BACK_INPUTS"), configured)
