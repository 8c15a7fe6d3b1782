"""``<build dir>/debug/run.py``: a script, written at each compile, that runs the build directory
again on its own (``python <build dir>/debug/run.py``), with no source of the program.

The script holds what is particular to the build: a ``_inline_inputs()`` making an argument for every
parameter from its compiled shape and dtype (random inputs, zero outputs, the value a scalar was
compiled with), which a user edits to run other values. Everything else (options, saved inputs,
comparing with saved outputs) is ``pypto.runtime.debug.replay.main``, so scripts written by older
compiles pick up its fixes."""

from pathlib import Path
from typing import Sequence

from pypto.runtime.compiled import Parameter
from pypto.runtime.torch_interop import torch_dtype_name

SCRIPT = Path("debug") / "run.py"

_FLOATS = ("FP32", "FP16", "BF16")


def write_run_script(output_dir, platform: str, program_name: str, parameters: Sequence[Parameter]) -> Path:
    """Writes ``<output_dir>/debug/run.py`` for a program compiled for ``platform``; returns its path."""
    path = Path(output_dir) / SCRIPT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_script(platform, program_name, parameters))
    return path


def _script(platform: str, program_name: str, parameters: Sequence[Parameter]) -> str:
    makers = "\n".join(f"    {_argument(p)}" for p in parameters)
    by_name = ", ".join(f'"{p.name}": {p.name}' for p in parameters)
    return f'''"""Runs {program_name}, compiled into this build directory, again: python {SCRIPT} [options]

Each parameter NAME is read from DIR/NAME.pt when --inputs DIR names a folder holding that file (by
default the build directory's data/in/, where it exists), else made by _inline_inputs() below: edit
it to run other values. After the run each output is summarised, compared with DIR/NAME.pt where
--expected DIR (default data/out/) has one, and saved with --save-outputs DIR. --help lists the
options (--platform, --seed, --dump-args, --swimlane, ...).

Written by pypto (pypto.runtime.debug.run_script) when the program was compiled.
"""

import sys
from pathlib import Path

import torch

from pypto.runtime.debug.replay import main

BUILD_DIR = Path(__file__).resolve().parent.parent


def _inline_inputs() -> dict:
    """An argument for every parameter, by name (--seed seeds torch's generator first)."""
{makers or "    pass"}
    return {{{by_name}}}


if __name__ == "__main__":
    sys.exit(main(BUILD_DIR, sys.argv[1:], _inline_inputs, default_platform={platform!r}))
'''


def _argument(param: Parameter) -> str:
    """The line of ``_inline_inputs`` that makes ``param``'s argument."""
    if param.kind == "scalar":
        return f"{param.name} = {_scalar(param)}"
    dtype = torch_dtype_name(param.dtype)
    if dtype is None:
        return f"{param.name} = None  # {param.dtype} has no torch dtype: build this tensor by hand"
    shape = tuple(param.shape or ())
    note = ""
    if any(not isinstance(dim, int) or dim < 0 for dim in shape):
        shape = tuple(dim if isinstance(dim, int) and dim >= 0 else 1 for dim in shape)
        note = f"  # dynamic dimensions ({list(param.shape)}) set to 1: give them the extents to run"
    if param.direction == "Out":
        return f"{param.name} = torch.zeros({shape!r}, dtype=torch.{dtype}){note}"
    if param.dtype in _FLOATS:
        return f"{param.name} = torch.randn({shape!r}, dtype=torch.{dtype}){note}"
    if param.dtype == "BOOL":
        return f"{param.name} = torch.randint(0, 2, {shape!r}).to(torch.bool){note}"
    # Small non-negative integers: safe as indices into most tensors, and they do not overflow.
    return f"{param.name} = torch.randint(0, 8, {shape!r}, dtype=torch.{dtype}){note}"


def _scalar(param: Parameter) -> str:
    if param.value is not None:
        return f"{param.value!r}  # compiled with this value: the kernels have it built in"
    zero = "0.0" if param.dtype in _FLOATS else "False" if param.dtype == "BOOL" else "0"
    return f"{zero}  # {param.dtype} scalar: set the value to run with"
